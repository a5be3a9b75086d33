import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import type { Capabilities, JsonRpcNotification } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, Peer, type RequestOptions, RequestTimeoutError, WmpSession } from '@wmp/session';
import {
  type FetchLike,
  HttpClientTransport,
  HttpTransportError,
  ReconnectPolicy,
  reconnect,
  WebSocketClientTransport,
} from '@wmp/transports';
import { MemoryStore } from '../store/memory-store.js';
import type { ClientStore } from '../store/store.js';
import { AckBatcher } from './acks.js';
import { Emitter, type Listener } from './emitter.js';
import { type Endpoint, resolveEndpoint } from './endpoint.js';
import { WmpClientError } from './errors.js';
import { isConnectionLost, isResumeRefused, isSessionGone } from './failures.js';
import { FallbackWatcher } from './fallback.js';
import { type FlowActionResult, type FlowHandle, FlowTracker } from './flows.js';
import { GroupSession, type GroupSessionLayer, type SessionHost, type StartFlowOptions } from './group-session.js';
import { Inbox, type Incoming } from './inbox.js';
import { parseState, type SavedGroup, type SavedState, StateWriter } from './saved-state.js';
import { SeenIds } from './seen-ids.js';
import type {
  ClientCallOptions,
  ClientEvents,
  ClientSendOptions,
  ClientSendResult,
  ConnectionState,
  MessageStatusEvent,
  ReceivedMessage,
  StateChange,
  WmpClientOptions,
} from './types.js';

/** What a relay client offers: messaging, relaying to third parties, offline with statuses, flows. */
export const DEFAULT_CLIENT_CAPABILITIES: Capabilities = { messaging: {}, relay: {}, offline: {}, flows: {} };

const DEFAULTS = {
  ttl: 86_400,
  requestTimeoutMs: 30_000,
  maxPendingRequests: 256,
  maxWaitingCalls: 256,
  maxPendingMessages: 1000,
  maxSeenIds: 8192,
  sendRetries: 3,
  maxFlows: 64,
  maxGroups: 15,
  fallbackWindowMs: 10_000,
} as const;

/** Sender-chosen ids longer than this are not remembered (they would bloat the stored dedupe set). */
const MAX_CLIENT_MESSAGE_ID = 128;
/** Re-register when less than this is left of the registration. */
const REGISTER_MARGIN_MS = 60_000;
/** Fallback length of a registration whose answer names no ttl. */
const DEFAULT_REGISTRATION_S = 3600;
/** Watched messages for the fallback. */
const MAX_FALLBACK_WATCHES = 256;
/** A flow's `done` rejects this long after its responder-side timeout, if nothing ended it. */
const FLOW_TIMEOUT_GRACE_MS = 5_000;

type Resolved = Required<
  Omit<WmpClientOptions, 'store' | 'WebSocket' | 'fetch' | 'reconnect' | 'fallback' | 'register'>
> &
  Pick<WmpClientOptions, 'WebSocket' | 'fallback' | 'register'> & { readonly fetch: FetchLike };

interface HeldGroup {
  /** Undefined until the first connection resumed it (a group read from the store). */
  session: WmpSession | undefined;
  readonly handle: GroupSession;
  readonly members: readonly string[];
  /** What the store had, for the first resume. */
  readonly saved: SavedGroup | undefined;
  /** The end-to-end layer attached to the session (`GroupSession.attach`), if any. */
  layer?: GroupSessionLayer | undefined;
}

/** Group-session notifications that go to the session's end-to-end layer (the relay fans them out). */
const GROUP_CONTROL_METHODS = [
  'wmp.mls.group.create',
  'wmp.mls.group.join',
  'wmp.mls.group.add',
  'wmp.mls.group.remove',
  'wmp.mls.group.update',
] as const;

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

interface CallPolicy {
  /** Times the call is made again after the connection dropped under it. */
  readonly retries: number;
  /** Whether -31000/-31001 mean that the connection's session is gone (not an answer about a named one). */
  readonly sessionLoss: boolean;
  /** Whether a timeout counts as a dead connection (sends: their retries are deduplicated). */
  readonly timeoutIsLoss?: boolean;
  readonly signal?: AbortSignal | undefined;
}

const isRecord = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const str = (x: unknown): string | undefined => (typeof x === 'string' && x.length > 0 ? x : undefined);
const STATUSES: ReadonlySet<string> = new Set(['queued', 'delivered', 'expired', 'dropped']);

function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function requestOptions(options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined }): RequestOptions {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

/**
 * A WMP client of one relay (or responder), for Node and browsers: it connects over WebSocket
 * or HTTP + SSE, authenticates with the identity's key, registers, reconnects with backoff and
 * resumes its sessions, hands every message to the application once (deduplicated by id, the
 * ids kept in the store) and acknowledges it after, and runs group sessions and flows.
 */
export class WmpClient implements SessionHost {
  readonly did: string;
  readonly #identity: WmpClientOptions['identity'];
  readonly #options: Resolved;
  readonly #endpoint: Endpoint;
  readonly #policy: ReconnectPolicy | undefined;
  readonly #seen: SeenIds;
  readonly #writer: StateWriter;
  readonly #events: Emitter<ClientEvents>;
  readonly #inbox: Inbox;
  /** Statuses the relay kept for us while we were away: they wait for a `status` listener. */
  readonly #keptStatuses: Inbox;
  readonly #acks = new AckBatcher();
  readonly #flows: FlowTracker;
  readonly #fallback: FallbackWatcher;
  readonly #groups = new Map<string, HeldGroup>();
  readonly #waiters = new Set<Waiter>();
  readonly #wired = new WeakSet<WmpSession>();
  readonly #abort = new AbortController();
  #saved: SavedState;
  #state: ConnectionState = 'connecting';
  #peer: Peer | undefined;
  /** The connection being set up (closed by `close()` too). */
  #dialing: Peer | undefined;
  #main: WmpSession | undefined;
  #registeredUntil: number | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  #lastReceivedId: string | undefined;
  #failure: unknown;
  #closing: Promise<void> | undefined;

  private constructor(
    options: WmpClientOptions,
    endpoint: Endpoint,
    store: ClientStore,
    prefix: string,
    seen: SeenIds,
    saved: SavedState,
  ) {
    this.#identity = options.identity;
    this.did = options.identity.did;
    this.#options = {
      identity: options.identity,
      transport: options.transport ?? 'auto',
      allowInsecure: options.allowInsecure ?? false,
      capabilities: options.capabilities ?? DEFAULT_CLIENT_CAPABILITIES,
      ttl: options.ttl ?? DEFAULTS.ttl,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      maxPendingRequests: options.maxPendingRequests ?? DEFAULTS.maxPendingRequests,
      maxWaitingCalls: options.maxWaitingCalls ?? DEFAULTS.maxWaitingCalls,
      maxPendingMessages: options.maxPendingMessages ?? DEFAULTS.maxPendingMessages,
      maxSeenIds: options.maxSeenIds ?? DEFAULTS.maxSeenIds,
      sendRetries: options.sendRetries ?? DEFAULTS.sendRetries,
      maxFlows: options.maxFlows ?? DEFAULTS.maxFlows,
      maxGroups: options.maxGroups ?? DEFAULTS.maxGroups,
      fallbackWindowMs: options.fallbackWindowMs ?? DEFAULTS.fallbackWindowMs,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}),
      ...(options.fallback ? { fallback: options.fallback } : {}),
      ...(options.register === undefined ? {} : { register: options.register }),
    };
    this.#endpoint = endpoint;
    this.#policy = options.reconnect === false ? undefined : new ReconnectPolicy(options.reconnect ?? {});
    this.#seen = seen;
    this.#saved = saved;
    this.#lastReceivedId = saved.lastReceivedId;
    this.#registeredUntil = saved.registeredUntil;
    const report = (e: unknown) => this.#report(e);
    this.#writer = new StateWriter(store, `${prefix}session`, report);
    this.#events = new Emitter<ClientEvents>((error, event) => {
      if (event !== 'error') this.#report(error);
    });
    this.#inbox = new Inbox(this.#options.maxPendingMessages, (m) => this.#take(m));
    this.#keptStatuses = new Inbox(this.#options.maxPendingMessages, (m) => this.#takeStatus(m));
    this.#flows = new FlowTracker(this.#options.maxFlows, (e) => this.#events.emit('flow', e));
    this.#fallback = new FallbackWatcher(MAX_FALLBACK_WATCHES, this.#options.fallbackWindowMs, report);
    for (const g of saved.groups) {
      this.#groups.set(g.id, {
        session: undefined,
        handle: new GroupSession(this, g.id, g.members),
        members: g.members,
        saved: g,
      });
    }
  }

  /**
   * Connects to `url` (`wss://relay/wmp`, `https://relay/wmp`, or a bare `https://relay` whose
   * well-known document says where), resumes the session kept in `store` for this relay and
   * identity or opens a new one, authenticates and registers. Rejects if the first connection
   * fails; later drops are retried with backoff.
   */
  static async connect(url: string | URL, options: WmpClientOptions): Promise<WmpClient> {
    const fetch = options.fetch ?? ((input: string | URL, init?: RequestInit) => globalThis.fetch(input, init));
    const webSocket =
      options.WebSocket !== undefined || typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function';
    const endpoint = await resolveEndpoint(url, { transport: options.transport ?? 'auto', fetch, webSocket });
    const store = options.store ?? new MemoryStore();
    const prefix = `client/${endpoint.origin}/${options.identity.did}/`;
    const maxGroups = options.maxGroups ?? DEFAULTS.maxGroups;
    const [seen, saved] = await Promise.all([
      SeenIds.load(store, `${prefix}seen/`, options.maxSeenIds ?? DEFAULTS.maxSeenIds),
      store.get(`${prefix}session`).then((text) => parseState(text, maxGroups)),
    ]);
    const client = new WmpClient({ ...options, fetch }, endpoint, store, prefix, seen, saved);
    try {
      await client.#open();
    } catch (e) {
      await client.close();
      throw e;
    }
    client.#connected();
    return client;
  }

  // ---- what the application reads ----

  get state(): ConnectionState {
    return this.#state;
  }

  /** `websocket` or `http`, and where. */
  get endpoint(): Endpoint {
    return this.#endpoint;
  }

  /** The client's own session at the relay (it changes only when a resume is refused). */
  get sessionId(): string | undefined {
    return this.#main?.id;
  }

  get capabilities(): Capabilities {
    return this.#main?.capabilities ?? {};
  }

  /** The newest message id handed to the application (kept in the store). */
  get lastReceivedId(): string | undefined {
    return this.#lastReceivedId;
  }

  get groups(): GroupSession[] {
    return [...this.#groups.values()].map((g) => g.handle);
  }

  group(id: string): GroupSession | undefined {
    return this.#groups.get(id)?.handle;
  }

  /**
   * Listens; returns the function that stops. Messages wait (unacknowledged) until there is a
   * `message` listener; a listener's returned promise is awaited before the message is
   * acknowledged, and messages are handed over one at a time, in order.
   */
  on<K extends keyof ClientEvents>(event: K, listener: Listener<ClientEvents[K]>): () => void {
    const off = this.#events.on(event, listener);
    const inbox = event === 'message' ? this.#inbox : event === 'status' ? this.#keptStatuses : undefined;
    inbox?.setPaused(false);
    return () => {
      off();
      if (inbox && this.#events.count(event) === 0) inbox.setPaused(true);
    };
  }

  // ---- messages ----

  /**
   * `wmp.message.deliver` to `to` through the relay, as a request: resolves once the relay has
   * stored it (`status: 'queued'`); statuses follow as `status` events. If the connection drops
   * under it, it is sent again after the reconnection with the same `clientMessageId`, which a
   * receiving `WmpClient` uses to keep one copy.
   */
  send(to: string | readonly string[], body: unknown, options: ClientSendOptions = {}): Promise<ClientSendResult> {
    return this.#deliver(undefined, typeof to === 'string' ? [to] : to, body, options);
  }

  /** Any method on the client's session (the `wmp` metadata is added); a refusal rejects with its `WmpError`. */
  request(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<unknown> {
    return this.#request(undefined, method, params, options);
  }

  /** A notification on the client's session. */
  notify(method: string, params: Record<string, unknown> = {}, options: ClientCallOptions = {}): Promise<void> {
    return this.#call(undefined, (s) => s.notify(method, params), {
      retries: 0,
      sessionLoss: true,
      signal: options.signal,
    });
  }

  /**
   * A message that came another way (a sealed mailbox's `MailMessage`): handed to the `message`
   * listeners unless it was seen already (same sender and `client_message_id`, from the relay or
   * an earlier mail). `from` must be the verified sender. Resolves true when it was handed over.
   */
  async receiveMail(mail: { readonly envelope: unknown; readonly from: string }): Promise<boolean> {
    const params = isRecord(mail.envelope) && isRecord(mail.envelope.params) ? mail.envelope.params : undefined;
    if (params === undefined) return false;
    const wmp = isRecord(params.wmp) ? params.wmp : {};
    const cid = str(wmp.client_message_id);
    const key = cid !== undefined && cid.length <= MAX_CLIENT_MESSAGE_ID ? `c:${mail.from} ${cid}` : undefined;
    if ((key !== undefined && this.#seen.has(key)) || this.#events.count('message') === 0) return false;
    await this.#events.emitAndWait('message', this.#received(params, undefined, undefined, 'mailbox', mail.from));
    if (key !== undefined) await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
    return true;
  }

  // ---- flows on the client's session ----

  startFlow(type: string, params: Record<string, unknown> = {}, options: StartFlowOptions = {}): Promise<FlowHandle> {
    return this.#startFlow(undefined, type, params, options);
  }

  actOnFlow(
    flowId: string,
    action: string,
    params: Record<string, unknown> = {},
    options: ClientCallOptions = {},
  ): Promise<FlowActionResult> {
    return this.#actOnFlow(undefined, flowId, action, params, options);
  }

  cancelFlow(flowId: string, options: ClientCallOptions = {}): Promise<void> {
    return this.#cancelFlow(undefined, flowId, options);
  }

  // ---- group sessions ----

  /** Creates a group session at the relay with these participants (and us). */
  async createGroup(
    participants: readonly string[],
    options: ClientCallOptions & { readonly ttl?: number } = {},
  ): Promise<GroupSession> {
    this.#checkGroupRoom();
    await this.#whenConnected(options.signal);
    const peer = this.#peer!;
    let session: WmpSession;
    try {
      session = await WmpSession.open(peer, {
        signer: this.#identity.keypair,
        sender: this.did,
        participants: [...participants],
        capabilities: this.#options.capabilities,
        ttl: options.ttl ?? this.#options.ttl,
        requestOptions: requestOptions({ signal: options.signal, timeoutMs: options.timeoutMs }),
      });
    } catch (e) {
      if (isConnectionLost(e)) this.#lost(peer, e);
      throw e;
    }
    const members = [...new Set([this.did, ...participants])];
    return this.#addGroup(session, members);
  }

  /** Enters a group session we are listed in; what the relay queued for us on it follows. */
  async joinGroup(sessionId: string, options: ClientCallOptions = {}): Promise<GroupSession> {
    const held = this.#groups.get(sessionId);
    if (held) return held.handle;
    this.#checkGroupRoom();
    const joined = await this.#call(
      undefined,
      async (main) => {
        const result = await main.peer.request(
          'wmp.session.join',
          { wmp: { version: main.version, sender: this.did }, session_id: sessionId },
          requestOptions(options),
        );
        if (!isRecord(result) || typeof result.resumption_token !== 'string') {
          throw new WmpClientError('ERR_CLIENT_BAD_ANSWER');
        }
        const wmp = isRecord(result.wmp) ? result.wmp : {};
        const session = WmpSession.restore(main.peer, {
          id: str(wmp.session_id) ?? sessionId,
          version: str(wmp.version) ?? main.version,
          sender: this.did,
          capabilities: isRecord(result.capabilities) ? (result.capabilities as Capabilities) : undefined,
          security: isRecord(result.security) ? (result.security as never) : undefined,
          resumptionToken: result.resumption_token,
        });
        const listed = Array.isArray(result.participants) ? result.participants.filter((p) => str(p)) : [];
        return { session, members: listed.length > 0 ? (listed as string[]) : [this.did] };
      },
      { retries: 0, sessionLoss: false, signal: options.signal },
    );
    const group = this.#addGroup(joined.session, joined.members);
    // The relay sends what it queued for us on the group right after the join answer, and the
    // first of it can be read in the same tick as the answer, before the session is attached
    // here (it is then left unacknowledged). A register has the relay send everything
    // unacknowledged again; the dedupe drops what came twice.
    if (this.#registeredUntil !== undefined && this.#main) {
      await this.#register(this.#main).catch((e: unknown) => this.#report(e));
    }
    return group;
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

  // ---- SessionHost (what group sessions call) ----

  holdsGroup(target: string): boolean {
    return this.#groups.has(target) && this.#state !== 'closed';
  }

  attachOn(target: string, layer: GroupSessionLayer | undefined): void {
    const held = this.#groups.get(target);
    if (!held) throw new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP');
    held.layer = layer;
    held.session?.useCipher(layer?.cipher);
  }

  receiveOn(target: string, params: Record<string, unknown>): boolean {
    const session = this.#groups.get(target)?.session;
    return session !== undefined && this.#inbox.push({ session, group: target, params });
  }

  deliverOn(
    target: string,
    to: readonly string[] | undefined,
    body: unknown,
    options: ClientSendOptions,
  ): Promise<ClientSendResult> {
    return this.#deliver(target, to, body, options);
  }

  requestOn(
    target: string,
    method: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<unknown> {
    return this.#request(target, method, params, options);
  }

  startFlowOn(
    target: string,
    type: string,
    params: Record<string, unknown>,
    options: StartFlowOptions,
  ): Promise<FlowHandle> {
    return this.#startFlow(target, type, params, options);
  }

  actOnFlowOn(
    target: string,
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<FlowActionResult> {
    return this.#actOnFlow(target, flowId, action, params, options);
  }

  cancelFlowOn(target: string, flowId: string, options: ClientCallOptions): Promise<void> {
    return this.#cancelFlow(target, flowId, options);
  }

  async closeGroup(target: string): Promise<void> {
    await this.#call(target, (s) => s.close(), { retries: 0, sessionLoss: false });
    this.#forgetGroup(target, new ConnectionClosedError());
  }

  // ---- calls ----

  #request(
    target: string | undefined,
    method: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<unknown> {
    return this.#call(target, (s) => s.request(method, params, requestOptions(options)), {
      retries: 0,
      sessionLoss: true,
      signal: options.signal,
    });
  }

  async #deliver(
    target: string | undefined,
    to: readonly string[] | undefined,
    body: unknown,
    options: ClientSendOptions,
  ): Promise<ClientSendResult> {
    const clientMessageId = options.clientMessageId ?? `cmsg-${b64urlEncode(randomBytes(16))}`;
    const contentType = options.contentType ?? 'application/json';
    const expiresAt = options.expiresAt instanceof Date ? rfc3339(options.expiresAt) : options.expiresAt;
    const content = {
      ...(to ? { to: [...to] } : {}),
      content_type: contentType,
      body,
      ...(options.messageType ? { message_type: options.messageType } : {}),
      ...(options.inReplyTo ? { in_reply_to: options.inReplyTo } : {}),
    };
    const params = {
      wmp: { client_message_id: clientMessageId, ...(expiresAt ? { expires_at: expiresAt } : {}) },
      ...content,
    };
    const result = await this.#call(target, (s) => s.request('wmp.message.deliver', params, requestOptions(options)), {
      retries: this.#options.sendRetries,
      sessionLoss: true,
      timeoutIsLoss: true,
      signal: options.signal,
    });
    const answer = isRecord(result) ? result : {};
    const messageId = str(answer.message_id);
    const status = STATUSES.has(answer.status as string) ? (answer.status as ClientSendResult['status']) : undefined;
    const fallback = options.fallback === false ? undefined : (options.fallback ?? this.#options.fallback);
    if (fallback && messageId !== undefined) {
      const envelope: JsonRpcNotification = {
        jsonrpc: '2.0',
        method: 'wmp.message.deliver',
        params: { wmp: { version: '0.1', sender: this.did, client_message_id: clientMessageId }, ...content },
      };
      this.#fallback.watch({ messageId, clientMessageId, group: target, contentType, body, envelope }, fallback);
    }
    return { messageId, clientMessageId, status };
  }

  async #startFlow(
    target: string | undefined,
    type: string,
    params: Record<string, unknown>,
    options: StartFlowOptions,
  ): Promise<FlowHandle> {
    await this.#whenConnected(options.signal);
    const sessionId = this.#sessionOf(target).id;
    const flowId = options.flowId ?? `flow-${b64urlEncode(randomBytes(16))}`;
    const handle = this.#flows.track(
      sessionId,
      flowId,
      type,
      {
        act: (id, action, p) => this.#actOnFlow(target, id, action, p, {}),
        cancel: (id) => this.#cancelFlow(target, id, {}),
      },
      {
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout * 1000 + FLOW_TIMEOUT_GRACE_MS }),
      },
    );
    try {
      await this.#call(
        target,
        (s) =>
          s.request(
            'wmp.flow.start',
            {
              flow_type: type,
              flow_id: flowId,
              params,
              ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
            },
            requestOptions(options),
          ),
        { retries: 0, sessionLoss: true, signal: options.signal },
      );
    } catch (e) {
      this.#flows.forget(sessionId, flowId);
      throw e;
    }
    return handle;
  }

  async #actOnFlow(
    target: string | undefined,
    flowId: string,
    action: string,
    params: Record<string, unknown>,
    options: ClientCallOptions,
  ): Promise<FlowActionResult> {
    const result = await this.#request(target, 'wmp.flow.action', { flow_id: flowId, action, params }, options);
    const status = isRecord(result) ? str(result.status) : undefined;
    return { flowId, action, status };
  }

  async #cancelFlow(target: string | undefined, flowId: string, options: ClientCallOptions): Promise<void> {
    await this.#request(target, 'wmp.flow.cancel', { flow_id: flowId }, options);
  }

  /**
   * Runs `fn` on the session of `target` (ours when undefined) once connected. When the
   * connection drops under it (or, with `sessionLoss`, the relay no longer knows the session),
   * the client reconnects, and the call is made again up to `retries` times.
   */
  async #call<T>(target: string | undefined, fn: (session: WmpSession) => Promise<T>, policy: CallPolicy): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      policy.signal?.throwIfAborted();
      await this.#whenConnected(policy.signal);
      const session = this.#sessionOf(target);
      const peer = this.#peer!;
      try {
        return await fn(session);
      } catch (e) {
        if (this.#state === 'closed') throw e;
        const lost =
          isConnectionLost(e) ||
          (policy.sessionLoss && isSessionGone(e)) ||
          (policy.timeoutIsLoss === true && e instanceof RequestTimeoutError);
        if (lost) this.#lost(peer, e);
        if (!lost || attempt >= policy.retries) throw e;
      }
    }
  }

  #sessionOf(target: string | undefined): WmpSession {
    const session = target === undefined ? this.#main : this.#groups.get(target)?.session;
    if (!session) throw new WmpClientError('ERR_CLIENT_UNKNOWN_GROUP');
    return session;
  }

  #whenConnected(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'connected') return Promise.resolve();
    if (this.#state === 'closed') return Promise.reject(this.#failure ?? new ConnectionClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#waiters.size >= this.#options.maxWaitingCalls) {
      return Promise.reject(new WmpClientError('ERR_CLIENT_TOO_MANY_WAITING'));
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => waiter.reject(signal?.reason);
      const cleanup = () => {
        this.#waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  // ---- the connection ----

  #dial(): Peer {
    const e = this.#endpoint;
    const o = this.#options;
    const transport =
      e.binding === 'websocket'
        ? new WebSocketClientTransport({
            url: e.url,
            allowInsecure: o.allowInsecure,
            ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}),
          })
        : new HttpClientTransport({
            endpoint: e.url,
            ...(e.eventsUrl ? { eventsUrl: e.eventsUrl } : {}),
            fetch: o.fetch,
            allowInsecure: o.allowInsecure,
            events: true,
            // The client's own policy: one backoff, whether the stream or the connection drops.
            ...(this.#policy ? { reconnect: this.#policy } : {}),
          });
    const peer = new Peer(transport, {
      requestTimeoutMs: o.requestTimeoutMs,
      maxPendingRequests: o.maxPendingRequests,
    });
    for (const method of GROUP_CONTROL_METHODS) {
      peer.setNotificationHandler(method, (params) => this.#groupControl(method, params));
    }
    // HTTP has no connection to lose: a failing event stream (the relay went away, or no longer
    // knows this HTTP session) is how a drop shows. Reconnecting resumes and replays.
    transport.onerror = (error) => {
      if (!(error instanceof HttpTransportError)) return;
      if (peer === this.#dialing) void peer.close().catch(() => undefined);
      else this.#lost(peer, error);
    };
    return peer;
  }

  /** One connection attempt: dial, resume (or open) the sessions, register. */
  async #open(): Promise<void> {
    const peer = this.#dial();
    this.#dialing = peer;
    try {
      await peer.start();
      await this.#establish(peer);
    } catch (e) {
      await peer.close().catch(() => undefined);
      throw e;
    } finally {
      this.#dialing = undefined;
    }
    if (this.#state === 'closed') {
      await peer.close().catch(() => undefined);
      throw this.#failure ?? new ConnectionClosedError();
    }
    this.#peer = peer;
    peer.onclose = () => this.#lost(peer, new ConnectionClosedError());
    if (peer.closed) {
      // It dropped before `onclose` was set: fail this attempt so the loop dials again.
      this.#peer = undefined;
      throw new ConnectionClosedError();
    }
  }

  async #establish(peer: Peer): Promise<void> {
    const sender = this.did;
    let main = this.#main;
    if (!main && this.#saved.session) main = WmpSession.restore(peer, { ...this.#saved.session, sender });
    // Wired before the resume: the relay replays the queue right after its answer.
    if (main) this.#wire(main, undefined);
    if (main && !(await this.#resume(main, peer))) main = undefined;
    let fresh = false;
    if (!main) {
      const previous = this.#main;
      main = await WmpSession.open(peer, {
        signer: this.#identity.keypair,
        sender,
        capabilities: this.#options.capabilities,
        ttl: this.#options.ttl,
      });
      fresh = true;
      this.#registeredUntil = undefined;
      if (previous) this.#flows.closeAll(new ConnectionClosedError(), previous.id);
    }
    this.#main = main;
    this.#wire(main, undefined);

    for (const [id, held] of [...this.#groups]) {
      const session = held.session ?? (held.saved ? WmpSession.restore(peer, { ...held.saved, sender }) : undefined);
      if (session) this.#wire(session, id);
      if (session && (await this.#resume(session, peer))) {
        held.session = session;
        if (held.layer) session.useCipher(held.layer.cipher);
        this.#wire(session, id);
      } else {
        this.#forgetGroup(id, new ConnectionClosedError());
      }
    }

    if (this.#options.register ?? 'relay' in main.capabilities) {
      // A resume keeps the registration. A new session needs one; so does a connection with
      // group sessions, whose messages the relay skipped while they were not yet resumed on it
      // (a register replays everything unacknowledged); and one near the end of its registration.
      const ending = (this.#registeredUntil ?? 0) < Date.now() + REGISTER_MARGIN_MS;
      if (fresh || this.#groups.size > 0 || ending) await this.#register(main);
      else this.#scheduleRefresh();
    }
    this.#save();
  }

  /**
   * `wmp.session.resume` on `peer`; false when the relay refused it for good (unknown, expired,
   * bad token). It claims no `last_received_id`: every message is acknowledged explicitly, and
   * the relay would count that id as acknowledging everything before it, including messages it
   * skipped for this connection (group sessions not resumed on it yet).
   */
  async #resume(session: WmpSession, peer: Peer): Promise<boolean> {
    session.lastReceivedId = undefined;
    try {
      await session.resume(peer, { timeoutMs: this.#options.requestTimeoutMs });
      return true;
    } catch (e) {
      if (isResumeRefused(e)) return false;
      throw e;
    }
  }

  async #register(main: WmpSession): Promise<void> {
    const result = await main.request('wmp.relay.register', {});
    const ttl =
      isRecord(result) && typeof result.ttl === 'number' && result.ttl > 0 ? result.ttl : DEFAULT_REGISTRATION_S;
    this.#registeredUntil = Date.now() + ttl * 1000;
    this.#scheduleRefresh();
    this.#save();
  }

  /** Registers again before the registration runs out (at 80% of what is left). */
  #scheduleRefresh(): void {
    clearTimeout(this.#refreshTimer);
    if (this.#registeredUntil === undefined || this.#state === 'closed') return;
    const delay = Math.max(1000, Math.floor((this.#registeredUntil - Date.now()) * 0.8));
    this.#refreshTimer = setTimeout(() => {
      const main = this.#main;
      const peer = this.#peer;
      if (!main || !peer || this.#state !== 'connected') return;
      this.#register(main).catch((e: unknown) => {
        if (isConnectionLost(e) || isSessionGone(e)) this.#lost(peer, e);
        else this.#report(e);
      });
    }, delay);
    (this.#refreshTimer as { unref?: () => void }).unref?.();
  }

  /** The connection under `peer` is gone: reconnect (or, without a policy, close). */
  #lost(peer: Peer, error: unknown): void {
    if (peer !== this.#peer || this.#state === 'closed') return;
    this.#peer = undefined;
    clearTimeout(this.#refreshTimer);
    void peer.close().catch(() => undefined);
    if (!this.#policy) {
      void this.#shutdownOnce(error);
      return;
    }
    this.#setState('reconnecting', { error });
    void this.#reconnect(this.#policy);
  }

  async #reconnect(policy: ReconnectPolicy): Promise<void> {
    try {
      await reconnect(() => this.#open(), policy, {
        signal: this.#abort.signal,
        onRetry: ({ attempt, delayMs, error }) =>
          this.#setState('reconnecting', { attempt, delayMs, ...(error === undefined ? {} : { error }) }),
      });
    } catch (e) {
      if (this.#state !== 'closed') await this.#shutdownOnce(e);
      return;
    }
    this.#connected();
  }

  #connected(): void {
    this.#setState('connected');
    for (const w of [...this.#waiters]) w.resolve();
  }

  #shutdownOnce(error: unknown): Promise<void> {
    this.#closing ??= this.#shutdown(error, false);
    return this.#closing;
  }

  async #shutdown(error: unknown, endSession: boolean): Promise<void> {
    const previous = this.#state;
    this.#state = 'closed';
    this.#failure = error;
    this.#abort.abort(error);
    clearTimeout(this.#refreshTimer);
    for (const w of [...this.#waiters]) w.reject(error);
    this.#flows.closeAll(error);
    this.#fallback.close();
    this.#inbox.close();
    this.#keptStatuses.close();
    const peer = this.#peer;
    this.#peer = undefined;
    // What the application already had is acknowledged, so the relay does not send it again
    // (over a live connection only: otherwise the relay sends it again and the dedupe drops it).
    if (peer && !peer.closed) {
      await this.#acks.close();
      if (endSession) await this.#main?.close().catch(() => undefined);
    } else this.#acks.discard();
    await peer?.close().catch(() => undefined);
    await this.#dialing?.close().catch(() => undefined);
    await this.#seen.flush();
    if (endSession) await this.#writer.clear().catch((e: unknown) => this.#report(e));
    else {
      this.#save();
      await this.#writer.flush();
    }
    this.#events.emit('state', {
      state: 'closed',
      previous,
      ...(error instanceof ConnectionClosedError ? {} : { error }),
    });
  }

  #setState(state: ConnectionState, extra: Omit<StateChange, 'state' | 'previous'> = {}): void {
    if (this.#state === 'closed') return;
    const previous = this.#state;
    this.#state = state;
    this.#events.emit('state', { state, previous, ...extra });
  }

  // ---- what arrives ----

  /** Routes a session's events into the client (once per session object; it survives resumes). */
  #wire(session: WmpSession, group: string | undefined): void {
    if (this.#wired.has(session)) return;
    this.#wired.add(session);
    session.on('message', (params) => void this.#inbox.push({ session, group, params, id: queueIdOf(params) }));
    session.on('status', (params) => this.#status(session, params));
    session.on('notification', ({ method, params }) => {
      if (this.#flows.handle(session.id, method, params)) return;
      if (method === 'wmp.session.close' && group !== undefined) this.#forgetGroup(group, new ConnectionClosedError());
      this.#events.emit('notification', { sessionId: session.id, method, params });
    });
  }

  /** One received message: dedupe, hand to the application (awaited), remember, acknowledge. */
  async #take(m: Incoming): Promise<void> {
    const wmp = isRecord(m.params.wmp) ? m.params.wmp : {};
    const id = str(wmp.message_id);
    const from = str(wmp.sender);
    const cid = str(wmp.client_message_id);
    const keys: string[] = [];
    if (id !== undefined) keys.push(`m:${id}`);
    if (cid !== undefined && from !== undefined && cid.length <= MAX_CLIENT_MESSAGE_ID) keys.push(`c:${from} ${cid}`);
    if (keys.some((k) => this.#seen.has(k))) {
      if (id !== undefined) this.#acks.add(m.session, id);
      return;
    }
    await this.#events.emitAndWait('message', this.#received(m.params, m.session.id, m.group, 'relay', from));
    // Acknowledged at once (before the dedupe set is written), so a close() right after the
    // listener still sends it; the relay does not send an acknowledged message again.
    if (id !== undefined) {
      this.#lastReceivedId = id;
      this.#acks.add(m.session, id);
    }
    if (keys.length > 0) await this.#seen.add(keys).catch((e: unknown) => this.#report(e));
    if (id !== undefined) this.#save();
  }

  #received(
    params: Record<string, unknown>,
    sessionId: string | undefined,
    group: string | undefined,
    via: ReceivedMessage['via'],
    from: string | undefined,
  ): ReceivedMessage {
    const wmp = isRecord(params.wmp) ? params.wmp : {};
    return {
      via,
      id: str(wmp.message_id),
      clientMessageId: str(wmp.client_message_id),
      from,
      to: Array.isArray(params.to) ? params.to.filter((t): t is string => typeof t === 'string') : undefined,
      sessionId,
      group,
      contentType: str(params.content_type),
      body: params.body,
      params,
    };
  }

  /**
   * A `wmp.message.status`. One the relay kept for us while we were away comes from our queue
   * with its own `wmp.message_id`: it is deduplicated and acknowledged like a message.
   */
  #status(session: WmpSession, params: Record<string, unknown>): void {
    const id = queueIdOf(params);
    if (id !== undefined) {
      void this.#keptStatuses.push({ session, group: undefined, params, id });
      return;
    }
    const status = statusOf(params);
    if (status === undefined) return;
    this.#events.emit('status', status);
    this.#fallback.status(status);
  }

  /** A kept status: like a message, handed over once, then remembered, then acknowledged. */
  async #takeStatus(m: Incoming): Promise<void> {
    const key = `m:${m.id}`;
    if (!this.#seen.has(key)) {
      const status = statusOf(m.params);
      if (status !== undefined) await this.#events.emitAndWait('status', status);
      await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
    }
    this.#acks.add(m.session, m.id!);
  }

  // ---- groups and state ----

  #checkGroupRoom(): void {
    if (this.#groups.size >= this.#options.maxGroups) throw new WmpClientError('ERR_CLIENT_TOO_MANY_GROUPS');
  }

  #addGroup(session: WmpSession, members: readonly string[]): GroupSession {
    const handle = new GroupSession(this, session.id, members);
    this.#groups.set(session.id, { session, handle, members, saved: undefined });
    this.#wire(session, session.id);
    this.#save();
    return handle;
  }

  /** A `wmp.mls.group.*` notification: to the layer of the group session it names (none: ignored, left unacknowledged). */
  #groupControl(method: string, params: unknown): void {
    const p = isRecord(params) ? params : {};
    const id = isRecord(p.wmp) ? str(p.wmp.session_id) : undefined;
    const layer = id === undefined ? undefined : this.#groups.get(id)?.layer;
    layer?.control(method, p);
  }

  #forgetGroup(id: string, error: unknown): void {
    if (!this.#groups.delete(id)) return;
    this.#flows.closeAll(error, id);
    this.#save();
  }

  #save(): void {
    const main = this.#main;
    const token = main?.resumptionToken;
    const groups: SavedGroup[] = [];
    for (const held of this.#groups.values()) {
      const s = held.session;
      if (s?.resumptionToken) groups.push({ ...snapshot(s, s.resumptionToken), members: held.members });
      else if (held.saved) groups.push(held.saved);
    }
    void this.#writer.write({
      v: 1,
      session: main ? (token ? snapshot(main, token) : undefined) : this.#saved.session,
      registeredUntil: this.#registeredUntil,
      lastReceivedId: this.#lastReceivedId,
      groups,
    });
  }

  #report(error: unknown): void {
    if (this.#events.count('error') === 0) return;
    this.#events.emit('error', error instanceof Error ? error : new Error(String(error)));
  }
}

/** The relay's id of a routed message or kept status (`wmp.message_id`). */
function queueIdOf(params: Record<string, unknown>): string | undefined {
  return isRecord(params.wmp) ? str(params.wmp.message_id) : undefined;
}

function statusOf(params: Record<string, unknown>): MessageStatusEvent | undefined {
  const messageId = str(params.message_id);
  if (messageId === undefined || !STATUSES.has(params.status as string)) return undefined;
  return {
    messageId,
    status: params.status as MessageStatusEvent['status'],
    recipient: str(params.recipient),
    queuedUntil: str(params.queued_until),
    reason: str(params.reason),
  };
}

function snapshot(session: WmpSession, resumptionToken: string) {
  return {
    id: session.id,
    version: session.version,
    resumptionToken,
    ...(session.capabilities ? { capabilities: session.capabilities } : {}),
    ...(session.security ? { security: session.security } : {}),
  };
}
