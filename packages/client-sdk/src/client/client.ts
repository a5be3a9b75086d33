import type { Capabilities } from '@wmp/jsonrpc-envelope';
import {
  type ApprovalRequest,
  type ApprovalResult,
  ConnectionClosedError,
  openPresenting,
  requestApproval,
  type SessionBindingInfo,
  type SignatureResult,
  type SignRequest,
  WmpSession,
} from '@wmp/session';
import { MemoryClientStore } from '../store/memory-store.js';
import { hasTlsOptions } from '../tls/options.js';
import { AckBatcher } from './acks.js';
import {
  type ApprovalRequestOptions,
  answerFlows,
  type FlowConsent,
  flowStarter,
  requestSignatureWith,
  type SignatureRequestOptions,
} from './built-in-flows.js';
import { CallRunner } from './call-runner.js';
import { Connection } from './connection.js';
import type { AcceptOptions, ConsignmentNotice } from './consignment.js';
import { dialTransport } from './dial.js';
import { Emitter, type Listener } from './emitter.js';
import { type Endpoint, resolveEndpoint } from './endpoint.js';
import { WmpClientError } from './errors.js';
import { type EvidencePage, type EvidenceQuery, readEvidence } from './evidence-reads.js';
import { expectedRelay } from './expected-relay.js';
import { FallbackWatcher } from './fallback.js';
import { type FlowActionResult, type FlowHandle, FlowTracker } from './flows.js';
import type { GroupSession } from './group-session.js';
import { Inbox } from './inbox.js';
import { type ResolvedOptions, resolveOptions } from './options.js';
import type { IncomingSession } from './peer-sessions/incoming-session.js';
import { PeerSession } from './peer-sessions/peer-session.js';
import { DEFAULT_SERVED_CAPABILITIES, SessionResponder } from './peer-sessions/session-responder.js';
import type { OpenPeerSessionOptions, ServeSessionsOptions } from './peer-sessions/types.js';
import { Persistence } from './persistence.js';
import { MessageChecks } from './proofs/message-checks.js';
import { MessageProver } from './proofs/message-prover.js';
import type { ReceivedEvidence } from './proofs/types.js';
import { Registration } from './registration.js';
import type { SavedState } from './saved-state.js';
import { type CallContext, CallsOnSession, type SessionCalls, type StartFlowOptions } from './session-calls.js';
import { ClientSessions, senderOf } from './sessions.js';
import type {
  ClientCallOptions,
  ClientEvents,
  ClientSendOptions,
  ClientSendResult,
  ConnectionState,
  WmpClientOptions,
} from './types.js';

/** Watched messages for the fallback. */
const MAX_FALLBACK_WATCHES = 256;

/**
 * A WMP client of one relay (or responder), for Node and browsers: it connects over WebSocket
 * or HTTP + SSE, authenticates with the identity's key, registers, reconnects with backoff and
 * resumes its sessions, hands every message to the application once (deduplicated by id, the
 * ids kept in the store) and acknowledges it after, and runs group sessions and flows.
 *
 * It coordinates its parts: the `Connection` (state machine, reconnects), the `ClientSessions`
 * (its own and its group sessions, set up on each connection), the `Registration`, the `Inbox`
 * (dedupe, acks, listeners), the calls on a session (`SessionCalls`, shared with `GroupSession`),
 * the flows, the fallback and the `Persistence`.
 */
export class WmpClient {
  readonly did: string;
  /** The identifier the relay knows this client by: its X.509 id when it has one, else `did`. */
  readonly id: string;
  readonly #endpoint: Endpoint;
  readonly #events: Emitter<ClientEvents>;
  readonly #persistence: Persistence;
  readonly #connection: Connection;
  readonly #registration: Registration;
  readonly #inbox: Inbox;
  readonly #flows: FlowTracker;
  readonly #fallback: FallbackWatcher;
  readonly #sessions: ClientSessions;
  /** Calls on the client's own session. */
  readonly #calls: SessionCalls;
  readonly #options: ResolvedOptions;
  /** End-to-end sessions this client opened to other parties (carried on every new connection). */
  readonly #peerSessions = new Set<PeerSession>();
  /** Acknowledgements of messages that came on end-to-end sessions (to the relay, on our session). */
  readonly #routedAcks = new AckBatcher();
  /** This client as the responder of sessions others open to it, once `onSession` was called. */
  #responder: SessionResponder | undefined;
  /** Signs and timestamps what is sent (core §5.4, §5.5). */
  readonly #prover: MessageProver;
  /** Checks the signatures, relay chains and tokens of what is received. */
  readonly #checks: MessageChecks;
  #closing: Promise<void> | undefined;

  private constructor(o: ResolvedOptions, endpoint: Endpoint, persistence: Persistence) {
    const saved = persistence.loaded;
    const report = (e: unknown) => this.#report(e);
    const save = () => this.#save();
    this.#options = o;
    this.did = o.identity.did;
    this.id = senderOf(o.identity);
    this.#prover = new MessageProver(o.identity, o.signatures, o.timestamp);
    const relayAnchors = o.relay === false ? undefined : o.relay?.trustAnchors;
    this.#checks = new MessageChecks({
      ...(o.signatures ? { signatures: o.signatures } : {}),
      ...(o.timestamp ? { timestampAnchors: o.timestamp.anchors } : {}),
      ...(relayAnchors ? { relayAnchors } : {}),
    });
    this.#endpoint = endpoint;
    this.#persistence = persistence;
    this.#events = new Emitter<ClientEvents>((error, event) => {
      if (event !== 'error') report(error);
    });
    this.#connection = new Connection({
      policy: o.policy,
      maxWaitingCalls: o.maxWaitingCalls,
      requestTimeoutMs: o.requestTimeoutMs,
      maxPendingRequests: o.maxPendingRequests,
      transport: () => dialTransport(endpoint, o),
      prepare: (peer) => {
        this.#sessions.groups.listenOn(peer);
        // Before the resume: the relay passes their frames (and replays their messages) at once.
        this.#responder?.attach(peer);
        for (const session of this.#peerSessions) session.attach(peer);
      },
      establish: (peer) => this.#sessions.establish(peer),
      onState: (change) => this.#events.emit('state', change),
      onDrop: () => this.#registration.pause(),
      onGiveUp: (error) => void this.#shutdownOnce(error),
    });
    this.#registration = new Registration({
      enabled: o.register,
      until: saved.registeredUntil,
      live: () => {
        const { peer, state } = this.#connection;
        const main = this.#sessions.main;
        return main && peer && state === 'connected' ? { main, peer } : undefined;
      },
      lost: (peer, error) => this.#connection.lost(peer, error),
      changed: save,
      report,
    });
    this.#fallback = new FallbackWatcher(MAX_FALLBACK_WATCHES, o.fallbackWindowMs, report);
    this.#inbox = new Inbox({
      events: this.#events,
      seen: persistence.seen,
      maxPendingMessages: o.maxPendingMessages,
      checks: this.#checks,
      relayId: () => this.#chainRelayId(),
      lastReceivedId: saved.lastReceivedId,
      onStatus: (status) => this.#fallback.status(status),
      onReceived: save,
      report,
    });
    this.#flows = new FlowTracker(o.maxFlows, (e) => this.#events.emit('flow', e));
    const runner = new CallRunner(this.#connection, (target) => this.#sessions.sessionOf(target));
    const context: CallContext = {
      runner,
      sender: this.did,
      id: this.id,
      sendRetries: o.sendRetries,
      fallback: o.fallback,
      fallbacks: this.#fallback,
      flows: this.#flows,
      prover: this.#prover,
    };
    this.#calls = new CallsOnSession(context, undefined);
    this.#sessions = new ClientSessions({
      ...o,
      expectedRelay: expectedRelay(o.relay, endpoint),
      loaded: saved,
      connection: this.#connection,
      runner,
      registration: this.#registration,
      inbox: this.#inbox,
      flows: this.#flows,
      events: this.#events,
      callsOn: (group) => new CallsOnSession(context, group),
      changed: save,
    });
  }

  /**
   * Connects to `url` (`wss://relay/wmp`, `https://relay/wmp`, or a bare `https://relay` whose
   * well-known document says where), resumes the session kept in `store` for this relay and
   * identity or opens a new one, authenticates and registers. Rejects if the first connection
   * fails; later drops are retried with backoff.
   */
  static async connect(url: string | URL, options: WmpClientOptions): Promise<WmpClient> {
    if (hasTlsOptions(options.tls)) throw new WmpClientError('ERR_CLIENT_TLS_OPTIONS');
    const o = resolveOptions(options);
    const webSocket =
      o.WebSocket !== undefined || typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function';
    const endpoint = await resolveEndpoint(url, {
      transport: o.transport,
      fetch: o.fetch,
      webSocket,
      timeoutMs: o.requestTimeoutMs,
    });
    const persistence = await Persistence.load({
      store: options.store ?? new MemoryClientStore(),
      origin: endpoint.origin,
      did: o.identity.did,
      maxGroups: o.maxGroups,
      maxSeenIds: o.maxSeenIds,
      // Store writes start once the client exists.
      report: (e) => client.#report(e),
    });
    const client: WmpClient = new WmpClient(o, endpoint, persistence);
    try {
      await client.#connection.open();
    } catch (e) {
      await client.close();
      throw e;
    }
    return client;
  }

  // ---- what the application reads ----

  get state(): ConnectionState {
    return this.#connection.state;
  }

  /** `websocket` or `http`, and where. */
  get endpoint(): Endpoint {
    return this.#endpoint;
  }

  /** The client's own session at the relay (it changes only when a resume is refused). */
  get sessionId(): string | undefined {
    return this.#sessions.main?.id;
  }

  /**
   * Who the relay proved to be when the client's session was opened (mutual authentication, core
   * §4.4.5): its `relay_id`, or its X.509 id. Undefined when no proof was asked for (`relay`).
   */
  get relayId(): string | undefined {
    return this.#sessions.main?.responder;
  }

  get capabilities(): Capabilities {
    return this.#sessions.main?.capabilities ?? {};
  }

  /** The newest message id handed to the application (kept in the store). */
  get lastReceivedId(): string | undefined {
    return this.#inbox.lastReceivedId;
  }

  get groups(): GroupSession[] {
    return this.#sessions.groups.handles();
  }

  group(id: string): GroupSession | undefined {
    return this.#sessions.groups.handle(id);
  }

  /**
   * Listens; returns the function that stops. Messages wait (unacknowledged) until there is a
   * `message` listener; a listener's returned promise is awaited before the message is
   * acknowledged, and messages are handed over one at a time, in order.
   */
  on<K extends keyof ClientEvents>(event: K, listener: Listener<ClientEvents[K]>): () => void {
    return this.#inbox.listen(event, listener);
  }

  /**
   * The evidence records the relay sends about messages this client sent (wmp-tables §9), once
   * the session negotiated `evidence` (offer `capabilities: {...DEFAULT_CLIENT_CAPABILITIES,
   * evidence: {event_types: [...]}}`): `on('evidence', listener)`. Each record comes with what its
   * JWS and token checks found; it is acknowledged after the listener.
   */
  onEvidence(listener: Listener<ReceivedEvidence>): () => void {
    return this.on('evidence', listener);
  }

  /**
   * Reads the relay's evidence repository (`GET /evidence`, signed by this client's key): the
   * records of a message (`{ messageId }`) or of a session in a range (`{ sessionId, since,
   * until }`) that name this client as a party, a page at a time. Needs a did:key identity (the
   * relay names the reader by its Ed25519 key).
   */
  evidence(query: EvidenceQuery): Promise<EvidencePage> {
    const o = this.#options;
    return readEvidence(
      {
        fetch: o.fetch,
        origin: this.#endpoint.origin,
        signer: o.identity.keypair,
        checks: this.#checks,
        timeoutMs: o.requestTimeoutMs,
      },
      query,
    );
  }

  // ---- calls on the client's session ----

  /**
   * `wmp.message.deliver` to `to` through the relay, as a request: resolves once the relay has
   * stored it (`status: 'accepted'` when a recipient is online, `'queued'` when none is); statuses
   * follow as `status` events. If the connection drops
   * under it, it is sent again after the reconnection with the same `clientMessageId`, which a
   * receiving `WmpClient` uses to keep one copy.
   */
  send(to: string | readonly string[], body: unknown, options: ClientSendOptions = {}): Promise<ClientSendResult> {
    return this.#calls.send(typeof to === 'string' ? [to] : to, body, options);
  }

  /**
   * Accepts a consented message the relay holds (a `notice`, or its message id): the relay hands
   * the content over as a `message`, and tells its sender `delivered`. For `consented_signed` the
   * acceptance is signed with the client's key over the notice's content hash (the receipt).
   * Resolves `accepted`; a refusal rejects with its `WmpError` (-31002 `insufficient_assurance`
   * when the client authenticated below the level the sender asked for).
   */
  accept(what: ConsignmentNotice | string, options: AcceptOptions = {}): Promise<string | undefined> {
    return this.#calls.accept(what, options);
  }

  /** Refuses a consented message: the relay drops it, its sender hears `dropped` (`recipient_rejected`). */
  async reject(what: ConsignmentNotice | string, options: ClientCallOptions & { reason?: string } = {}): Promise<void> {
    const messageId = typeof what === 'string' ? what : what.messageId;
    const { reason, ...call } = options;
    await this.#calls.request('wmp.message.reject', { message_id: messageId, ...(reason ? { reason } : {}) }, call);
  }

  /** Any method on the client's session (the `wmp` metadata is added); a refusal rejects with its `WmpError`. */
  request(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<unknown> {
    return this.#calls.request(method, params, options);
  }

  /** A notification on the client's session. */
  notify(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<void> {
    return this.#calls.notify(method, params, options);
  }

  startFlow(type: string, params: Record<string, unknown> = {}, options: StartFlowOptions = {}): Promise<FlowHandle> {
    return this.#calls.startFlow(type, params, options);
  }

  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions = {},
  ): Promise<FlowActionResult> {
    return this.#calls.actOnFlow(flowId, action, params, options);
  }

  cancelFlow(flowId: string, options: ClientCallOptions = {}): Promise<void> {
    return this.#calls.cancelFlow(flowId, options);
  }

  /** The built-in `approval` flow (core §6.3) on the client's session, answered by its responder. */
  requestApproval(request: ApprovalRequest, options: ApprovalRequestOptions = {}): Promise<ApprovalResult> {
    return requestApproval(flowStarter(this.sessionId ?? '', this.#calls), request, options);
  }

  /** The built-in `sign` flow (core §6.4) on the client's session: `signer`'s proof, verified. */
  requestSignature(
    request: SignRequest,
    options: SignatureRequestOptions & { readonly signer: string },
  ): Promise<SignatureResult> {
    return requestSignatureWith(flowStarter(this.sessionId ?? '', this.#calls), request, options);
  }

  /**
   * Answers the built-in `approval` and `sign` flows on the client's sessions that name this
   * client as their reviewer or signer (`awaiting_review`, `awaiting_signature`): `consent`
   * decides, then the client acts (a signature made with its key). Returns the function that stops.
   */
  answerFlows(consent: FlowConsent): () => void {
    const identity = this.#options.identity;
    return answerFlows(
      (listener) => this.on('flow', listener),
      (sessionId, flowId, action, params) => {
        if (sessionId === this.sessionId) return this.actOnFlow(flowId, action, params);
        const group = this.group(sessionId);
        return group
          ? group.actOnFlow(flowId, action, params)
          : Promise.reject(new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP'));
      },
      identity.x509 ?? { id: identity.did, signer: identity.keypair },
      consent,
      (e) => this.#report(e),
    );
  }

  /**
   * A message that came another way (a sealed mailbox's `MailMessage`): handed to the `message`
   * listeners unless it was seen already (same sender and `client_message_id`, from the relay or
   * an earlier mail). `from` must be the verified sender. Resolves true when it was handed over.
   */
  receiveMail(mail: { readonly envelope: unknown; readonly from: string }): Promise<boolean> {
    return this.#inbox.receiveMail(mail);
  }

  // ---- group sessions ----

  /** Creates a group session at the relay with these participants (and us). */
  createGroup(
    participants: readonly string[],
    options: ClientCallOptions & { readonly ttl?: number } = {},
  ): Promise<GroupSession> {
    return this.#sessions.createGroup(participants, options);
  }

  /** Enters a group session we are listed in; what the relay queued for us on it follows. */
  joinGroup(sessionId: string, options: ClientCallOptions = {}): Promise<GroupSession> {
    return this.#sessions.joinGroup(sessionId, options);
  }

  // ---- sessions end to end with other parties (transport §6.2) ----

  /**
   * Opens a session with `peer` (its identifier) through the relay, end to end: the relay offers
   * the create to the peer, which answers it, proves itself (mutual authentication) and
   * authenticates us; its flows, resolve and methods then answer on the returned session. When
   * the peer cannot answer (offline, or a client that answers no sessions), the relay hosts the
   * session instead: `relayHosted` is true (or, with `whenHosted: 'refuse'`,
   * `ERR_CLIENT_PEER_UNREACHABLE`).
   */
  async openSession(peer: string, options: OpenPeerSessionOptions = {}): Promise<PeerSession> {
    const o = this.#options;
    await this.#connection.whenConnected(options.signal);
    const connection = this.#connection.peer!;
    const expected = expectedRelay(o.relay, this.#endpoint);
    const open = (identityAssertions?: (s: SessionBindingInfo) => Promise<readonly unknown[]>) =>
      WmpSession.open(connection, {
        signer: o.identity.keypair,
        sender: this.id,
        ...(o.identity.x509 ? { x509: o.identity.x509 } : {}),
        participants: [peer],
        capabilities: options.capabilities ?? DEFAULT_SERVED_CAPABILITIES,
        ...(options.ttl ? { ttl: options.ttl } : {}),
        verifyResponder: { id: peer },
        verifyHostedBy: expected ?? false,
        requestOptions: {
          ...(options.signal ? { signal: options.signal } : {}),
          timeoutMs: options.timeoutMs ?? o.requestTimeoutMs,
        },
        ...(identityAssertions ? { identityAssertions } : {}),
      });
    const session = await (options.present ? openPresenting(open, options.present) : open());
    if (session.relayHosted && options.whenHosted === 'refuse') {
      await session.close().catch(() => undefined);
      throw new WmpClientError('ERR_CLIENT_PEER_UNREACHABLE');
    }
    const handle = new PeerSession(session, peer, session.relayHosted, {
      whenConnected: (signal) => this.#connection.whenConnected(signal),
      prover: this.#prover,
      check: (params) => this.#checks.check(params, this.#chainRelayId()),
      ack: (id) => this.#ackRouted(id),
      report: (e) => this.#report(e),
      forget: (s) => this.#peerSessions.delete(s),
    });
    this.#peerSessions.add(handle);
    return handle;
  }

  /**
   * Answers the sessions other parties open to this client through the relay, as their
   * responder: with `options`' capabilities, flow types and resolvers, authenticating each
   * initiator (a signed challenge by default) and proving itself to it. `listener` gets each
   * session once its initiator authenticated. Resolves with the function that stops answering.
   */
  async onSession(
    listener: (session: IncomingSession) => void,
    options: ServeSessionsOptions = {},
  ): Promise<() => Promise<void>> {
    if (this.#responder !== undefined) throw new WmpClientError('ERR_CLIENT_ALREADY_SERVING');
    const identity = this.#options.identity;
    const endpoint = this.#endpoint;
    const responder = await SessionResponder.start(options, {
      identity: identity.x509 ?? { id: identity.did, signer: identity.keypair },
      sender: this.id,
      prover: this.#prover,
      check: (params) => this.#checks.check(params, this.#chainRelayId()),
      // `endpoint` for this client itself: where it is reached (its relay).
      ownEndpoint: {
        supported_versions: ['0.1'],
        endpoints: { [endpoint.binding === 'websocket' ? 'websocket' : 'https']: endpoint.url },
        relay: endpoint.url,
        ...(endpoint.relayId ? { relay_id: endpoint.relayId } : {}),
      },
      ack: (id) => this.#ackRouted(id),
      report: (e) => this.#report(e),
      opened: (session) => {
        try {
          listener(session);
        } catch (e) {
          this.#report(e);
        }
      },
    });
    this.#responder = responder;
    const peer = this.#connection.peer;
    if (peer) responder.attach(peer);
    return async () => {
      if (this.#responder === responder) this.#responder = undefined;
      await responder.close();
    };
  }

  /**
   * The relay a relay chain's last hop must be: the one this client proved, when it proved a DID
   * (a relay signs its hops with its did:key, also when it authenticates with a certificate).
   */
  #chainRelayId(): string | undefined {
    const proven = this.relayId;
    return proven?.startsWith('did:') ? proven : undefined;
  }

  #ackRouted(messageId: string): void {
    const main = this.#sessions.main;
    if (main) this.#routedAcks.add(main, messageId);
  }

  // ---- closing ----

  /**
   * Stops: pending and waiting calls reject with `ConnectionClosedError`, reconnecting stops,
   * every timer is cleared, and what the application already had is acknowledged. The session
   * stays resumable from the store, unless `endSession` closes it at the relay and forgets it.
   */
  close(options: { readonly endSession?: boolean } = {}): Promise<void> {
    this.#closing ??= this.#shutdown(new ConnectionClosedError(), options.endSession ?? false);
    return this.#closing;
  }

  #shutdownOnce(error: unknown): Promise<void> {
    this.#closing ??= this.#shutdown(error, false);
    return this.#closing;
  }

  async #shutdown(error: unknown, endSession: boolean): Promise<void> {
    const { previous, peer } = this.#connection.stop(error);
    this.#registration.stop();
    this.#flows.closeAll(error);
    this.#fallback.close();
    this.#inbox.close();
    await this.#responder?.close().catch(() => undefined);
    this.#responder = undefined;
    this.#peerSessions.clear();
    // What the application already had is acknowledged, so the relay does not send it again
    // (over a live connection only: otherwise the relay sends it again and the dedupe drops it).
    if (peer && !peer.closed) {
      await Promise.all([this.#inbox.sendAcks(), this.#routedAcks.close()]);
      if (endSession) await this.#sessions.main?.close().catch(() => undefined);
    } else {
      this.#inbox.dropAcks();
      this.#routedAcks.discard();
    }
    await this.#connection.release(peer);
    await this.#persistence.finish(() => this.#state(), endSession);
    this.#events.emit('state', {
      state: 'closed',
      previous,
      ...(error instanceof ConnectionClosedError ? {} : { error }),
    });
  }

  // ---- state ----

  #state(): SavedState {
    return {
      v: 1,
      ...this.#sessions.saved(),
      registeredUntil: this.#registration.until,
      lastReceivedId: this.#inbox.lastReceivedId,
    };
  }

  #save(): void {
    this.#persistence.save(this.#state());
  }

  #report(error: unknown): void {
    if (this.#events.count('error') === 0) return;
    this.#events.emit('error', error instanceof Error ? error : new Error(String(error)));
  }
}
