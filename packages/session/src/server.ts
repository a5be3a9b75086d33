import { jcsBytes, signedContentOf, verifyMessage, WMP_SKEW_SECONDS } from '@wmp/jcs-signing';
import {
  BoundedSet,
  InvalidParamsError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type MethodRegistry,
  type MethodSpec,
  MlsError,
  NotAuthorizedError,
  RateLimitedError,
  SessionExpiredError,
  SessionNotFoundError,
  type WmpError,
  type WmpMetadata,
} from '@wmp/jsonrpc-envelope';
import { checkPresented } from './assertions/session-assertions.js';
import type { Authenticator } from './auth/authenticator.js';
import { acceptedSchemes } from './auth/schemes.js';
import { signedChallengeAuthenticator } from './auth/signed-challenge.js';
import type { Connection, WmpContext } from './context.js';
import { checkSenderDelegation } from './delegation/sender-check.js';
import {
  capabilitiesUsed,
  checkCapabilities,
  checkDuplicateId,
  checkEncryption,
  checkMessageSize,
  checkTimestamp,
  checkTokenTime,
  MAX_RECENT_IDS,
  participantBinding,
  timeFromToken,
} from './enforce.js';
import { FlowManager } from './flows.js';
import { capabilityHandlers } from './handlers/capability.js';
import { flowHandlers } from './handlers/flow.js';
import { messagingHandlers } from './handlers/messaging.js';
import { resolveHandlers } from './handlers/resolve.js';
import { closeSessionAs, sessionHandlers, withWmp } from './handlers/session.js';
import { MemorySessionStore } from './memory-session-store.js';
import { openParams, sealParams } from './mls/cipher.js';
import { validateEncryptedParams } from './mls/encrypted-params.js';
import { baseCapabilities, encryptionRequiredFor, isEncrypted } from './mls/policy.js';
import { type BaseContext, Peer, type PeerOptions, type RequestHandler } from './peer.js';
import { SESSION_EXPIRED, UNKNOWN_SESSION } from './refusal-reasons.js';
import { isRouted } from './routes.js';
import { ServerConnections } from './server-connections.js';
import { ServerMethods } from './server-methods.js';
import type { ServerServices, WmpServerOptions } from './services.js';
import { isExpired, type SessionRecord } from './session-model.js';
import type { SessionStore } from './session-store.js';
import type { Transport } from './transport.js';

/**
 * The handler's context: `base` with what the pipeline found, on the same object. A spread would
 * read base's lazy `signal` and so make an AbortController for every connection that ever spoke.
 */
function contextOf(
  base: BaseContext,
  found: Omit<WmpContext, keyof BaseContext> & { readonly params?: unknown },
): WmpContext {
  return Object.assign(base, found);
}

/**
 * The session a message names for routing, read from its raw params (before any schema): its
 * `wmp.session_id`, or the `session_id` a resume or a join asks for.
 */
function routedSessionIdOf(message: JsonRpcRequest | JsonRpcNotification): string | undefined {
  const params = message.params as { wmp?: { session_id?: unknown }; session_id?: unknown } | undefined;
  const byParams = message.method === 'wmp.session.resume' || message.method === 'wmp.session.join';
  const named = byParams ? params?.session_id : params?.wmp?.session_id;
  return typeof named === 'string' ? named : undefined;
}

/**
 * A WMP responder: one Peer per connection, sessions shared through a store. Every incoming
 * message goes through one pipeline (schema, session, binding, pending state, sender, timestamp,
 * duplicate id, capability, encryption, signature policy) before its handler runs.
 */
export class WmpServer {
  readonly #options: WmpServerOptions;
  readonly #store: SessionStore;
  readonly #flows: FlowManager;
  readonly #authenticators: Map<string, Authenticator>;
  readonly #methods: ServerMethods;
  readonly #connections: ServerConnections;
  readonly #now: () => number;
  /**
   * What every connection's Peer is made with, built once: its callbacks find their connection
   * through `#connectionOf` instead of each connection holding closures of its own (idle memory).
   */
  readonly #peerOptions: PeerOptions<WmpContext>;
  readonly #connectionOf = new WeakMap<Peer<WmpContext>, Connection>();
  #nextConnectionId = 1;

  constructor(options: WmpServerOptions = {}) {
    this.#options = options;
    this.#store = options.store ?? new MemorySessionStore();
    this.#flows = options.flows ?? new FlowManager();
    this.#authenticators = new Map(
      Object.entries(options.authenticators ?? { signed_challenge: signedChallengeAuthenticator() }),
    );
    this.#now = options.now ?? Date.now;
    this.#methods = new ServerMethods(options);
    this.#connections = new ServerConnections(options);
    this.#peerOptions = this.#makePeerOptions(options);
    const services = this.#services();
    for (const group of [sessionHandlers, capabilityHandlers, messagingHandlers, flowHandlers, resolveHandlers]) {
      for (const [method, handler] of Object.entries(group(services))) this.#methods.handle(method, handler);
    }
  }

  get flows(): FlowManager {
    return this.#flows;
  }

  get store(): SessionStore {
    return this.#store;
  }

  /** The well-known `accepted_schemes`: exactly what the configured authenticators prove. */
  get acceptedSchemes(): string[] {
    return acceptedSchemes(this.#authenticators);
  }

  /**
   * Adds or replaces the handler of a method the server knows (a relay adds `wmp.relay.register`,
   * say); a `MethodRegistryError` (`not_defined`) for a name no descriptor defines: see `method`.
   */
  handle(method: string, handler: RequestHandler<WmpContext>): void {
    this.#methods.handle(method, handler);
  }

  /**
   * Defines a custom method in one registration: its descriptor (schemas, the capability it needs,
   * who may call it, whether its content is encrypted) and its handler. Its capability is offered
   * for negotiation (core §9.2); calling it on a session that did not negotiate it is -31005.
   */
  method(name: string, spec: MethodSpec, handler: RequestHandler<WmpContext>): void {
    this.#methods.define(name, spec, handler);
  }

  /** The methods this server knows, core and custom. */
  get methods(): MethodRegistry {
    return this.#methods.registry;
  }

  /** Open connections, and of those the ones with no authenticated session. */
  get connectionCounts(): { readonly open: number; readonly unauthenticated: number } {
    return this.#connections.counts;
  }

  /**
   * Serves one connection until it closes. Over `maxConnections`, or `maxUnauthenticatedConnections`
   * (every new connection is unauthenticated), the transport is closed as `overloaded` and this
   * rejects with -31007 naming the cap.
   */
  async connect(transport: Transport): Promise<Connection> {
    const cap = this.#connections.refusal();
    if (cap !== undefined) {
      await transport.close('overloaded');
      throw new RateLimitedError({ reason: cap });
    }
    const peer: Peer<WmpContext> = new Peer<WmpContext>(transport, this.#peerOptions);
    const connection: Connection = {
      id: this.#nextConnectionId++,
      peer,
      sessions: new Map(),
      authenticated: false,
      loginTimer: undefined,
      ...(transport.remoteAddress === undefined ? {} : { remoteAddress: transport.remoteAddress }),
      ...(transport.peerCertificates === undefined ? {} : { peerCertificates: transport.peerCertificates }),
    };
    this.#connectionOf.set(peer, connection);
    this.#connections.add(connection);
    await peer.start();
    return connection;
  }

  #makePeerOptions(options: WmpServerOptions): PeerOptions<WmpContext> {
    const connectionOf = (peer: Peer<WmpContext>): Connection => {
      const connection = this.#connectionOf.get(peer);
      // Set right after the Peer is made, before it starts: a peer of another server never gets here.
      if (connection === undefined) throw new Error('peer of no connection');
      return connection;
    };
    return {
      interceptor: (message, base, peer) => this.#intercept(connectionOf(peer), message, base),
      sharedHandlers: this.#methods.handlers,
      onNotificationRefused: (error, message, peer) => this.#notificationRefused(connectionOf(peer), error, message),
      onHandlerError: (error, method) => options.hooks?.handlerFailed?.(method, error),
      ...(options.hooks?.requestRefused === undefined
        ? {}
        : {
            onRequestRefused: (error: WmpError, method: string, peer: Peer<WmpContext>) =>
              options.hooks?.requestRefused?.(method, error, connectionOf(peer)),
          }),
      ...(options.refusalOf === undefined ? {} : { refusalOf: options.refusalOf }),
      onClose: (peer) => {
        const connection = connectionOf(peer);
        this.#connections.remove(connection);
        options.hooks?.connectionClosed?.(connection);
      },
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.maxMessageBytes === undefined
        ? {}
        : { limits: { maxBytes: options.maxMessageBytes, maxDepth: 32, maxBatch: 100 } }),
    };
  }

  /**
   * Sends a notification to every connection bound to a session, MLS-encrypted when the session's
   * security mode requires it of this method (and not at all if this responder cannot encrypt).
   */
  async notifySession(sessionId: string, method: string, params: Record<string, unknown>): Promise<void> {
    const session = await this.#store.get(sessionId);
    const full = session ? await this.#seal(session, method, withWmp(session, params)) : params;
    if (full === undefined) return;
    const targets = this.#connections.of(sessionId);
    await Promise.all(targets.map((c) => c.peer.notify(method, full, sessionId).catch(() => undefined)));
  }

  /** Connections currently bound to a session. */
  connectionsOf(sessionId: string): Connection[] {
    return this.#connections.of(sessionId);
  }

  async close(): Promise<void> {
    await Promise.all(this.#connections.all.map((c) => c.peer.close().catch(() => undefined)));
  }

  /**
   * Ends a session from the responder's side: its connections are told (`wmp.session.close`),
   * then it is deleted, its flows and bindings go and the `sessionEnded` hook runs.
   */
  async closeSession(sessionId: string, reason: 'complete' | 'timeout' | 'error' = 'complete'): Promise<void> {
    const session = await this.#store.get(sessionId);
    if (session === undefined) return;
    await this.notifySession(sessionId, 'wmp.session.close', { reason }).catch(() => undefined);
    await this.#store.delete(sessionId);
    this.#ended({ ...session, state: 'closed' });
  }

  /**
   * Ends every bound session that is gone from the store or expired (a session is otherwise seen
   * to expire only when a message names it); resolves how many. O(bound sessions).
   */
  async sweep(): Promise<number> {
    const now = this.#now();
    let ended = 0;
    for (const id of [...this.#connections.boundSessions]) {
      const session = await this.#store.get(id);
      if (session !== undefined && !isExpired(session, now)) continue;
      if (session === undefined) {
        // Deleted elsewhere (a sweeper of the store): only its bindings and flows are left here.
        this.#flows.closeSession(id);
        this.#services().unbind(id);
      } else {
        await this.#store.delete(id);
        this.#ended(session);
      }
      ended++;
    }
    return ended;
  }

  /**
   * Binds an existing session to `connection` without a handshake, for a binding that proved the
   * client holds it (an HTTP session token another node of a cluster issued, or this node before a
   * restart). Only a session with at most one authenticated identity can be carried so (it binds
   * that identity; a pending one stays pending); -31000 when there is none, -31002 for a group
   * session of several. The other sessions that identity joined (group sessions the HTTP session
   * carried too) follow when a message on this connection names them.
   */
  async adopt(connection: Connection, sessionId: string): Promise<SessionRecord> {
    const session = await this.#store.get(sessionId);
    if (!session || session.state === 'closed' || isExpired(session, this.#now()))
      throw new SessionNotFoundError(UNKNOWN_SESSION);
    if (session.authenticated.length > 1) throw new NotAuthorizedError({ reason: 'session of several participants' });
    const identity = session.authenticated[0];
    await this.#carry(connection, session, identity);
    if (identity !== undefined) connection.adopted = identity;
    return session;
  }

  /** Binds `session` for `identity` on `connection` and lets the hooks route to it. */
  async #carry(connection: Connection, session: SessionRecord, identity: string | undefined): Promise<void> {
    const services = this.#services();
    services.checkBind(connection, session.id);
    services.bind(connection, session.id, identity);
    await this.#options.hooks?.adopted?.(session, identity, connection);
  }

  #notificationRefused(connection: Connection, error: WmpError, message: JsonRpcNotification): void {
    const hook = this.#options.hooks?.notificationRefused;
    if (!hook) return;
    const id = (message.params as { wmp?: { session_id?: unknown } } | undefined)?.wmp?.session_id;
    const bound = typeof id === 'string' && connection.sessions.has(id);
    void (bound ? this.#store.get(id) : Promise.resolve(undefined))
      .then((session) => hook(message.method, error, connection, session, message))
      .catch(() => undefined);
  }

  /**
   * What we send on a session: encrypted, as our group member, when the mode requires it of the
   * method (a flow notification also exercises its flow type's capability); undefined when it is
   * required and we hold no cipher for the session.
   */
  async #seal(
    session: SessionRecord,
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    if (isEncrypted(params)) return params; // a member's ciphertext we pass on
    const used = baseCapabilities(method, this.#methods.registry);
    const flow = typeof params.flow_id === 'string' ? this.#flows.get(session.id, params.flow_id) : undefined;
    if (flow) {
      // As `capabilitiesUsed` counts a start: a registered type's capability, an unknown type's name.
      const type = this.#flows.type(flow.type);
      const capability = type ? type.capability : flow.type;
      if (capability) used.push(capability);
    }
    if (encryptionRequiredFor(session.security, method, used, this.#methods.registry) === undefined) return params;
    const cipher = await this.#options.mls?.cipherOf?.(session.id);
    if (!cipher) return undefined;
    const { wmp, ...content } = params as { wmp: Record<string, unknown> };
    return sealParams(cipher, method, { wmp: { ...wmp, sender: cipher.identity }, ...content }, this.#methods.registry);
  }

  /** The session ended (closed or expired): flows, bindings, the relay's hook and the MLS group go. */
  #ended(session: SessionRecord): void {
    this.#unbindEnded(session.id);
    this.#options.hooks?.sessionEnded?.(session);
    void Promise.resolve(this.#options.mls?.deleteGroup?.(session.id)).catch(() => undefined);
  }

  /**
   * Nothing here serves `sessionId` any more: its flows and bindings go, and a connection that is
   * that session (an HTTP session) ends with it, token and event streams included.
   */
  #unbindEnded(sessionId: string): void {
    this.#flows.closeSession(sessionId);
    for (const connection of this.#connections.of(sessionId)) {
      const transport = connection.peer.transport;
      if (transport.sessionId === sessionId) transport.sessionEnded?.();
    }
    this.#connections.unbind(sessionId);
  }

  /**
   * Ends `sessionId` for the identity `connection` carries it for, as a `wmp.session.close` sent on
   * it would (a binding's own logout: `DELETE /wmp` of an HTTP session). Resolves once the store
   * no longer holds it; a session that is not bound to `connection` (or gone) is left alone.
   */
  async endSession(connection: Connection, sessionId: string): Promise<void> {
    const binding = connection.sessions.get(sessionId);
    if (binding === undefined) return;
    const session = await this.#store.get(sessionId);
    if (session === undefined || session.state === 'closed') {
      this.#unbindEnded(sessionId);
      return;
    }
    await closeSessionAs(this.#services(), connection, session, binding.identity);
  }

  /**
   * `sessionId` ended on another node of a cluster (it is gone from the shared store): what this
   * node holds of it goes, as when it ends here, without the hooks (that node ran them).
   */
  forget(sessionId: string): void {
    this.#unbindEnded(sessionId);
  }

  #services(): ServerServices {
    const methods = this.#methods;
    const connections = this.#connections;
    return {
      options: this.#options,
      store: this.#store,
      flows: this.#flows,
      authenticators: this.#authenticators,
      // Read at each call: a custom method defined later adds its capability.
      get supportedCapabilities() {
        return methods.supported;
      },
      now: () => this.#now(),
      notifySession: (id, method, params) => this.notifySession(id, method, params),
      seal: (session, method, params) => this.#seal(session, method, params),
      ended: (session) => this.#ended(session),
      checkBind: (connection, sessionId) => connections.checkBind(connection, sessionId),
      bind: (connection, sessionId, identity) => connections.bind(connection, sessionId, identity),
      unbind: (sessionId) => connections.unbind(sessionId),
      unbindConnection: (connection, sessionId) => connections.unbindConnection(connection, sessionId),
      supersede: (sessionId, identity, current) => {
        for (const c of connections.of(sessionId)) {
          const transport = c.peer.transport;
          if (c === current || transport.sessionId !== sessionId || c.sessions.get(sessionId)?.identity !== identity)
            continue;
          transport.sessionEnded?.();
        }
      },
    };
  }

  async #intercept(
    connection: Connection,
    message: JsonRpcRequest | JsonRpcNotification,
    base: BaseContext,
  ): Promise<WmpContext> {
    const routes = this.#options.routes;
    // A routed session's frames pass before any schema here: the two parties may speak methods
    // this responder does not know. Only a responder that routes pays for the early lookup.
    let prefetched: SessionRecord | undefined;
    if (routes !== undefined) {
      const named = routedSessionIdOf(message) ?? base.extra?.sessionId;
      prefetched = named === undefined ? undefined : await this.#store.get(named);
      if (prefetched !== undefined && isRouted(prefetched) && !isExpired(prefetched, this.#now())) {
        const session = prefetched;
        const context: WmpContext = contextOf(base, { session, sender: undefined, connection });
        return Object.assign(context, { pass: () => routes.pass(message, session, context) });
      }
    }
    // Encrypted content is checked in two steps: its clear part here, the plaintext once decrypted.
    const encrypted = isEncrypted(message.params);
    const methods = this.#methods.registry;
    const spec = methods.require(message.method);
    const params = (
      encrypted
        ? validateEncryptedParams(message.method, message.params, methods)
        : methods.validateParams(message.method, message.params)
    ) as Record<string, unknown>;
    const wmp = (params as { wmp: WmpMetadata }).wmp;
    const now = this.#now();
    const skew = this.#options.skewSeconds ?? WMP_SKEW_SECONDS;
    const tokens = this.#options.timestampTokens;
    // With a token to verify, the time is checked once the sender is known (below).
    const byToken = timeFromToken(wmp, tokens !== undefined, spec.access === 'sessionless');
    if (!byToken) checkTimestamp(wmp, now, skew);
    if (spec.access === 'sessionless') {
      const context = contextOf(base, { session: undefined, sender: undefined, connection });
      await this.#options.admitSessionless?.(message.method, context);
      return context;
    }
    const sessionId = wmp.session_id ?? base.extra?.sessionId;
    if (sessionId === undefined) throw new NotAuthorizedError({ reason: 'no session' });
    const session = prefetched?.id === sessionId ? prefetched : await this.#store.get(sessionId);
    if (!session || session.state === 'closed' || connection.closing?.has(sessionId) === true) {
      // The session this connection is ended elsewhere (another node, a sweep): the connection ends too.
      if (!session && connection.sessions.has(sessionId)) this.#unbindEnded(sessionId);
      throw new SessionNotFoundError(UNKNOWN_SESSION);
    }
    if (isExpired(session, now)) {
      await this.#store.delete(sessionId);
      this.#ended(session);
      throw new SessionExpiredError(SESSION_EXPIRED);
    }
    // A session id alone is never enough: the session must be bound to this connection, or be one
    // the identity an adopted connection proved has joined (what a new join would bind anyway).
    let binding = connection.sessions.get(sessionId);
    if (!binding && connection.adopted !== undefined && session.authenticated.includes(connection.adopted)) {
      await this.#carry(connection, session, connection.adopted);
      binding = connection.sessions.get(sessionId);
    }
    // Else a listed participant of a group session sending on it: for this message only (a reply
    // needs no join).
    const bound = binding !== undefined;
    if (!bound && message.method === 'wmp.message.deliver')
      binding = participantBinding(connection, session, wmp.sender);
    if (!binding) throw new NotAuthorizedError({ reason: 'session not bound to this connection' });
    if (session.state === 'pending' && spec.access !== 'pending') {
      throw new NotAuthorizedError({ reason: 'authentication required' });
    }
    const forwarder =
      binding.identity !== undefined && this.#options.forwardsFor?.(binding.identity, message.method) === true;
    // A forwarder speaking as the delegate itself is no forward: its delegation is checked here.
    const forwarded = forwarder && wmp.sender_delegate?.id !== binding.identity;
    const delegation =
      message.method === 'wmp.session.authenticate' || forwarded
        ? undefined
        : await checkSenderDelegation(this.#options.delegation, message.method, wmp, binding.identity, session, now);
    if ('id' in message && bound) {
      let recent = binding.recentIds;
      if (recent === undefined) {
        // Kept on the binding (no map of its own per connection); `binding` is the map's entry here.
        recent = new BoundedSet<string | number>(MAX_RECENT_IDS);
        binding = { identity: binding.identity, recentIds: recent };
        connection.sessions.set(sessionId, binding);
      }
      checkDuplicateId(recent, message.id);
    }
    // A member decrypts; a responder without a cipher for the session relays deliveries unread.
    const plain = encrypted
      ? await this.#decrypt(message.method, params, session.id, wmp.sender ?? binding.identity ?? session.initiator)
      : params;
    const handled: JsonRpcRequest | JsonRpcNotification = plain === params ? message : { ...message, params: plain };
    const context = contextOf(base, {
      session,
      sender: binding.identity,
      connection,
      ...(plain === params ? {} : { params: plain }),
      ...(encrypted ? { encrypted } : {}),
      ...(delegation ? { delegation } : {}),
    });
    if (this.#options.authorize && !(await this.#options.authorize(context)))
      throw new NotAuthorizedError({ reason: 'not allowed' });
    const reason = this.#options.validate?.(message.method, plain);
    if (reason !== undefined) throw new InvalidParamsError({ reason });
    const used = capabilitiesUsed(
      handled,
      session,
      (type) => {
        const flowType = this.#flows.type(type);
        return flowType ? (flowType.capability ?? null) : undefined;
      },
      methods,
    );
    checkCapabilities(used, session, this.#options.grantedCapabilities);
    if (message.method === 'wmp.message.deliver') checkMessageSize(session, message, base.frame, base.batched);
    checkEncryption(message.method, encrypted, used, session, methods);
    if (byToken) {
      // Over the content as the handler sees it (a sender timestamps before it encrypts); a
      // responder that cannot read the content cannot check the token, so the self-asserted
      // timestamp is checked instead.
      if (encrypted && plain === params) checkTimestamp(wmp, now, skew);
      else {
        const content = () => jcsBytes(signedContentOf(handled));
        await checkTokenTime(wmp.timestamp_token!, content, tokens!, now, skew);
      }
    }
    const policy = this.#options.requireSignatures;
    if (policy === true || (Array.isArray(policy) && policy.includes(message.method))) {
      // Over the content as the handler sees it: a sender signs before it encrypts.
      await verifyMessage(handled, {
        required: true,
        ...(this.#options.keyResolver ? { resolver: this.#options.keyResolver } : {}),
        ...(this.#options.signatureChains ? { x5c: this.#options.signatureChains } : {}),
        ...(binding.identity ? { signer: binding.identity } : {}),
      });
    }
    // Identity assertions a message carries (core §5.6); authenticate checks its own.
    const presented = (plain.wmp as WmpMetadata | undefined)?.identity_assertions;
    if (presented !== undefined && message.method !== 'wmp.session.authenticate') {
      const assertions = await checkPresented(this.#options.identityAssertions, presented, {
        session,
        presenter: binding.identity,
        now,
        mls: this.#options.mls,
      });
      if (assertions.length > 0) Object.assign(context, { assertions });
    }
    return context;
  }

  /**
   * The plaintext params of an encrypted message, checked against the method's schema, when we
   * are a member of the session's group; the encrypted params themselves for a deliver we only
   * relay; -31004 `no_group` for anything else we cannot read.
   */
  async #decrypt(
    method: string,
    params: Record<string, unknown>,
    sessionId: string,
    sender: string | undefined,
  ): Promise<Record<string, unknown>> {
    const cipher = await this.#options.mls?.cipherOf?.(sessionId);
    if (!cipher) {
      if (method === 'wmp.message.deliver') return params;
      throw new MlsError({ reason: 'no_group' });
    }
    const methods = this.#methods.registry;
    return methods.validateParams(method, await openParams(cipher, method, params, sender, methods)) as Record<
      string,
      unknown
    >;
  }
}
