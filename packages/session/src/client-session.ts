import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import {
  type Capabilities,
  EncryptionRequiredError,
  InvalidParamsError,
  type JsonRpcId,
  MlsError,
  NotAuthorizedError,
  rfc3339,
  type Security,
  toWmpError,
  type WmpError,
} from '@wmp/jsonrpc-envelope';
import { type ChallengeProver, challengeAnswer } from './auth/challenge-answer.js';
import { verifyResponderAuth } from './auth/responder.js';
import { type FlowProgressListener, FlowWaiters } from './client-flows.js';
import type {
  CapabilityUpdate,
  Listener,
  OpenSessionOptions,
  RestoredSessionState,
  SessionEvents,
} from './client-session-types.js';
import { newRequestId } from './ids.js';
import { openParams, type SessionCipher, sealParams } from './mls/cipher.js';
import {
  encryptionRequiredFor,
  incomingCapabilities,
  isContentMethod,
  isEncrypted,
  outgoingCapabilities,
} from './mls/policy.js';
import { WMP_VERSION } from './negotiate.js';
import type { BaseContext, Peer, RequestOptions } from './peer.js';
import { routeSession, routeUnrouted, unrouteSession } from './session-routing.js';

/** What a `wmp.session.resume` answers (core §4.5). */
interface ResumeResult {
  resumption_token?: string;
  missed_messages?: number;
  capabilities?: Capabilities;
  security?: Security;
}

/**
 * The initiator's side of a WMP session (core §4): create, authenticate with a signed challenge,
 * call methods with the right `wmp` metadata, follow flows, resume on a new connection, close.
 */
export class WmpSession {
  #peer: Peer<BaseContext>;
  readonly id: string;
  readonly version: string;
  readonly sender: string | undefined;
  capabilities: Capabilities;
  security: Security | undefined;
  #resumptionToken: string | undefined;
  /** The newest message id received on this session: what a resume asks to continue after. */
  lastReceivedId: string | undefined;
  /**
   * A create naming one other participant through a relay was answered by the relay, which hosts
   * the session, rather than by that participant (transport §6.2: it could not be reached).
   */
  relayHosted = false;
  readonly #listeners: { [K in keyof SessionEvents]: Set<Listener<SessionEvents[K]>> } = {
    message: new Set(),
    status: new Set(),
    notification: new Set(),
    error: new Set(),
  };
  readonly #flows = new FlowWaiters();
  #cipher: SessionCipher | undefined;
  /** Who the responder counts as the session's participants, when known (see `outgoingCapabilities`). */
  #participants: readonly string[] | undefined;
  #responder: string | undefined;
  #takesUnrouted = false;
  /** The challenge of the create result: the nonce of identity assertions on this session (core §5.6). */
  #challenge: string | undefined;
  /** The connection a resume in progress moves the session to (see `#register`). */
  #resumingOn: Peer<BaseContext> | undefined;

  private constructor(
    peer: Peer<BaseContext>,
    id: string,
    version: string,
    sender: string | undefined,
    result: Record<string, unknown>,
  ) {
    this.#peer = peer;
    this.id = id;
    this.version = version;
    this.sender = sender;
    this.capabilities = (result.capabilities ?? {}) as Capabilities;
    this.security = result.security as Security | undefined;
    this.#resumptionToken = result.resumption_token as string | undefined;
    if (Array.isArray(result.participants)) this.#participants = result.participants as string[];
    this.#register(peer);
  }

  /** The identity the responder proved at open (`verifyResponder`); undefined when none was asked for. */
  get responder(): string | undefined {
    return this.#responder;
  }

  /** Creates a session on a started peer, authenticating with `signer` when the responder asks. */
  static async open(peer: Peer<BaseContext>, options: OpenSessionOptions = {}): Promise<WmpSession> {
    const sender = options.sender ?? options.x509?.id ?? (options.signer as { did?: string } | undefined)?.did;
    const version = options.version ?? WMP_VERSION;
    const nonce = options.verifyResponder ? `n-${b64urlEncode(randomBytes(16))}` : undefined;
    const params: Record<string, unknown> = {
      wmp: { version, ...(sender ? { sender } : {}) },
      ...(options.participants ? { participants: [...options.participants] } : {}),
      ...(options.capabilities ? { capabilities_offered: options.capabilities } : {}),
      ...(options.security ? { security: options.security } : {}),
      ...(options.ttl ? { ttl: options.ttl } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
      ...(nonce ? { nonce } : {}),
      ...(options.mls && options.security && options.security.mode !== 'tls'
        ? { mls_key_package: options.mls.keyPackage }
        : {}),
    };
    const result = (await peer.request('wmp.session.create', params, options.requestOptions)) as Record<
      string,
      unknown
    >;
    const wmp = result.wmp as { session_id?: string; version?: string; relay_hosted?: unknown } | undefined;
    if (!wmp?.session_id) throw new NotAuthorizedError({ reason: 'no session id in the create result' });
    let responder: string | undefined;
    const hosted = wmp.relay_hosted === true;
    const expected =
      hosted && options.verifyHostedBy !== undefined ? options.verifyHostedBy || undefined : options.verifyResponder;
    if (nonce && expected) {
      try {
        responder = await verifyResponderAuth(result.auth, { nonce, sessionId: wmp.session_id }, expected);
      } catch (e) {
        // Tell the responder we are gone; nothing else goes to a responder that failed.
        void peer
          .notify('wmp.session.close', { wmp: { version, session_id: wmp.session_id }, reason: 'error' })
          .catch(() => undefined);
        throw e;
      }
    }
    const session = new WmpSession(peer, wmp.session_id, wmp.version ?? version, sender, result);
    session.#responder = responder;
    session.relayHosted = hosted;
    if (typeof result.challenge === 'string') session.#challenge = result.challenge;
    // The responder's participants: the creator's claim and the listed ones.
    session.#participants = [...new Set([...(sender ? [sender] : []), ...(options.participants ?? [])])];
    if (options.cipher) session.useCipher(options.cipher);
    if (options.mls && typeof result.mls_welcome === 'string') {
      session.useCipher(await options.mls.join(result.mls_welcome));
    }
    const prover = options.x509 ?? options.signer;
    if (result.auth_required === true || (prover && typeof result.challenge === 'string' && !options.auth)) {
      if (!prover || !sender || typeof result.challenge !== 'string') {
        throw new NotAuthorizedError({ reason: 'the responder requires authentication and no signer was given' });
      }
      const assertions = await options.identityAssertions?.({ sessionId: session.id, challenge: result.challenge });
      await session.authenticate(prover, result.challenge, assertions);
    }
    return session;
  }

  /**
   * A session known from before, attached to `peer` without a request: saved state (then call
   * `resume`), or the answer of a `wmp.session.join` sent on `peer`.
   */
  static restore(peer: Peer<BaseContext>, state: RestoredSessionState): WmpSession {
    const session = new WmpSession(peer, state.id, state.version, state.sender, {
      capabilities: state.capabilities,
      security: state.security,
      resumption_token: state.resumptionToken,
    });
    session.lastReceivedId = state.lastReceivedId;
    session.#responder = state.responder;
    return session;
  }

  get peer(): Peer<BaseContext> {
    return this.#peer;
  }

  get resumptionToken(): string | undefined {
    return this.#resumptionToken;
  }

  /** The MLS group this session encrypts and decrypts with, if any. */
  get cipher(): SessionCipher | undefined {
    return this.#cipher;
  }

  /**
   * Attaches the session's MLS group (or detaches it with `undefined`). From then on, content
   * messages that the security mode wants encrypted are encrypted with it (core §5.2), and
   * encrypted incoming ones are decrypted before any listener sees them.
   */
  useCipher(cipher: SessionCipher | undefined): void {
    this.#cipher = cipher;
  }

  on<K extends keyof SessionEvents>(event: K, listener: Listener<SessionEvents[K]>): () => void {
    this.#listeners[event].add(listener);
    return () => this.#listeners[event].delete(listener);
  }

  /**
   * The session's challenge, when the responder gave one: the nonce of the identity assertions
   * its messages carry (core §5.6), with the session id as their audience.
   */
  get challenge(): string | undefined {
    return this.#challenge;
  }

  /**
   * `wmp.session.authenticate`: a `signed_challenge` with a Signer, an `x5c` with an X509Identity,
   * with identity assertions (core §5.6) when given.
   */
  async authenticate(
    signer: ChallengeProver,
    challenge: string,
    identityAssertions?: readonly unknown[],
  ): Promise<string> {
    if (!this.sender) throw new NotAuthorizedError({ reason: 'sender required' });
    const timestamp = rfc3339(Date.now());
    const auth = await challengeAnswer(signer, { challenge, sessionId: this.id, sender: this.sender, timestamp });
    const presented = identityAssertions && identityAssertions.length > 0 ? identityAssertions : undefined;
    const result = (await this.request('wmp.session.authenticate', {
      auth,
      ...(presented ? { wmp: { identity_assertions: [...presented] } } : {}),
    })) as {
      identity?: string;
      participant_id?: string;
    };
    return result.participant_id ?? result.identity ?? this.sender;
  }

  /** The session metadata every message carries. */
  metadata(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { version: this.version, session_id: this.id, ...(this.sender ? { sender: this.sender } : {}), ...extra };
  }

  /**
   * Calls a method on the session. A content method the security mode wants encrypted is sent
   * MLS-encrypted with the session's cipher (without one it is refused here with -31003).
   */
  async request(method: string, params: Record<string, unknown> = {}, options?: RequestOptions): Promise<unknown> {
    const out = this.#outgoing(method, params);
    return this.#peer.request(method, out instanceof Promise ? await out : out, options);
  }

  /**
   * Calls a method once per params in one frame (a JSON-RPC batch: `Peer.requestBatch`), each with
   * the session's metadata (and encrypted as `request` would): one promise per entry, in order.
   * For a responder that takes batches of this many entries (a relay parses up to 100).
   */
  async requestBatch(
    method: string,
    paramsList: readonly Record<string, unknown>[],
    options?: RequestOptions,
  ): Promise<Promise<unknown>[]> {
    const out = paramsList.map((params) => this.#outgoing(method, params));
    const sealed = out.some((o) => o instanceof Promise) ? await Promise.all(out) : (out as Record<string, unknown>[]);
    return this.#peer.requestBatch(method, sealed, options);
  }

  async notify(method: string, params: Record<string, unknown> = {}): Promise<void> {
    const out = this.#outgoing(method, params);
    await this.#peer.notify(method, out instanceof Promise ? await out : out, this.id);
  }

  /**
   * `wmp.capability.update` (core §4.2.4): adopts the new capabilities and security; an upgrade
   * to MLS with `mls` joins the responder's new group as at open.
   */
  async updateCapabilities(update: CapabilityUpdate, options?: RequestOptions): Promise<Capabilities> {
    const upgrade = update.mls && update.security && update.security.mode !== 'tls';
    const result = (await this.request(
      'wmp.capability.update',
      {
        ...(update.add ? { add: update.add } : {}),
        ...(update.remove ? { remove: [...update.remove] } : {}),
        ...(update.security ? { security: update.security } : {}),
        ...(upgrade ? { mls_key_package: update.mls!.keyPackage } : {}),
      },
      options,
    )) as { capabilities?: Capabilities; security?: Security; mls_welcome?: unknown };
    if (result.capabilities) this.capabilities = result.capabilities;
    if (result.security) this.security = result.security;
    if (upgrade && typeof result.mls_welcome === 'string') this.useCipher(await update.mls!.join(result.mls_welcome));
    return this.capabilities;
  }

  /**
   * Our params with the session's metadata, encrypted when the security mode says so (a promise
   * only then: clear messages take no extra microtask).
   */
  #outgoing(
    method: string,
    params: Record<string, unknown>,
  ): Record<string, unknown> | Promise<Record<string, unknown>> {
    const { wmp, ...rest } = params as { wmp?: Record<string, unknown> };
    const full = { wmp: this.metadata(wmp), ...rest };
    if (wmp?.encrypted === true) return full; // encrypted by the caller
    const capability = encryptionRequiredFor(
      this.security,
      method,
      outgoingCapabilities(method, rest, this.#participants),
    );
    if (capability === undefined) return full;
    if (!this.#cipher) throw new EncryptionRequiredError({ capability });
    return sealParams(this.#cipher, method, full);
  }

  /** Sends `wmp.message.deliver` as a request (acknowledged) to `to`. */
  async send(to: readonly string[], body: unknown, contentType = 'application/json'): Promise<unknown> {
    return this.request('wmp.message.deliver', { to: [...to], content_type: contentType, body });
  }

  /** Starts a flow; `done` settles with its `wmp.flow.complete` result or its `wmp.flow.error`. */
  async startFlow(
    flowType: string,
    params: Record<string, unknown> = {},
    options: { flowId?: string; timeout?: number; onProgress?: FlowProgressListener } = {},
  ): Promise<{ flowId: string; done: Promise<Record<string, unknown>> }> {
    const flowId = options.flowId ?? `flow-${newRequestId().slice(4)}`;
    const done = this.#flows.wait(flowId, options.onProgress);
    try {
      await this.request('wmp.flow.start', {
        flow_type: flowType,
        flow_id: flowId,
        params,
        ...(options.timeout ? { timeout: options.timeout } : {}),
      });
    } catch (e) {
      this.#flows.forget(flowId);
      throw e;
    }
    return { flowId, done };
  }

  /**
   * Resumes on a new connection (core §4.5) with the rotated token and the last received id;
   * the responder replays what we missed. Returns how many messages it reports missed.
   */
  async resume(peer: Peer<BaseContext>, options?: RequestOptions): Promise<number> {
    if (!this.#resumptionToken) throw new NotAuthorizedError({ reason: 'no resumption token' });
    this.#register(peer);
    this.#resumingOn = peer;
    let result: ResumeResult;
    try {
      result = (await peer.request(
        'wmp.session.resume',
        {
          wmp: { version: this.version, ...(this.sender ? { sender: this.sender } : {}) },
          session_id: this.id,
          resumption_token: this.#resumptionToken,
          ...(this.lastReceivedId ? { last_received_id: this.lastReceivedId } : {}),
        },
        options,
      )) as ResumeResult;
    } finally {
      if (this.#resumingOn === peer) this.#resumingOn = undefined;
    }
    this.#peer = peer;
    this.#resumptionToken = result.resumption_token;
    if (result.capabilities) this.capabilities = result.capabilities;
    if (result.security) this.security = result.security;
    return result.missed_messages ?? 0;
  }

  /**
   * This session also takes what arrives on its connection naming a session nobody there holds
   * (a group session we are listed in but never joined: the relay sends its messages to our
   * registered connection, naming the group). `false` stops it.
   */
  takeUnrouted(on = true): void {
    this.#takesUnrouted = on;
    routeUnrouted(
      this.#peer,
      on ? (method, params, requestId) => this.#incoming(method, params, requestId) : undefined,
    );
  }

  /**
   * Carries the session on another connection without a resume: for a session routed through a
   * relay (transport §6.2), which passes its frames from any connection authenticated as us, so a
   * reconnect to the relay needs no round trip to the responder.
   */
  attach(peer: Peer<BaseContext>): void {
    if (peer === this.#peer) return;
    unrouteSession(this.#peer, this.id);
    this.#peer = peer;
    this.#register(peer);
  }

  async close(reason: 'complete' | 'timeout' | 'error' | 'user_cancelled' = 'complete'): Promise<void> {
    await this.notify('wmp.session.close', { reason });
    unrouteSession(this.#peer, this.id);
    this.#flows.rejectAll();
  }

  #register(peer: Peer<BaseContext>): void {
    routeSession(peer, this.id, (method, params, requestId) => {
      // The responder sends a resumed session's messages only on the connection it moved it to
      // (after its answer, docs/decisions/0734): one read may carry both, handed over in one turn,
      // before `resume` continues. What a listener sends at once (an ack) must go there too.
      if (peer === this.#resumingOn) this.#peer = peer;
      return this.#incoming(method, params, requestId);
    });
    if (this.#takesUnrouted) this.takeUnrouted();
  }

  /**
   * Security first: encrypted content is decrypted (its MLS sender must be its `wmp.sender`), clear
   * content the mode wants encrypted is refused (-31003). A refusal is an `error` event and, for a
   * request, the error answer; nothing reaches the other listeners.
   */
  #incoming(method: string, params: Record<string, unknown>, requestId: JsonRpcId | undefined): Promise<void> | void {
    if (isEncrypted(params)) return this.#decryptAndReceive(method, params, requestId);
    const capability = encryptionRequiredFor(this.security, method, incomingCapabilities(method));
    if (capability !== undefined) this.#refuse(method, new EncryptionRequiredError({ capability }));
    this.#receive(method, params, requestId);
  }

  async #decryptAndReceive(
    method: string,
    params: Record<string, unknown>,
    requestId: JsonRpcId | undefined,
  ): Promise<void> {
    let opened: Record<string, unknown>;
    try {
      if (!isContentMethod(method)) throw new InvalidParamsError({ reason: `${method} is never encrypted` });
      if (!this.#cipher) throw new MlsError({ reason: 'no_group' });
      const sender = (params.wmp as { sender?: unknown }).sender;
      opened = await openParams(this.#cipher, method, params, typeof sender === 'string' ? sender : undefined);
    } catch (e) {
      this.#refuse(method, toWmpError(e));
    }
    this.#receive(method, opened, requestId);
  }

  #refuse(method: string, error: WmpError): never {
    for (const l of this.#listeners.error) l({ method, error });
    throw error;
  }

  #receive(method: string, params: Record<string, unknown>, requestId: JsonRpcId | undefined): void {
    if (method === 'wmp.message.deliver') {
      const messageId =
        (params.wmp as { message_id?: string } | undefined)?.message_id ??
        (requestId === undefined ? undefined : String(requestId));
      if (messageId !== undefined) this.lastReceivedId = messageId;
      for (const l of this.#listeners.message) l(params);
      return;
    }
    if (method === 'wmp.message.status') {
      for (const l of this.#listeners.status) l(params);
      return;
    }
    this.#flows.receive(method, params);
    for (const l of this.#listeners.notification) l({ method, params });
  }
}
