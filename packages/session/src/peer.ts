import {
  DEFAULT_PARSE_LIMITS,
  errorFromJsonRpc,
  type InvalidBatchEntry,
  isInvalidEntry,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  MethodNotFoundError,
  type ParseLimits,
  parseMessage,
  RateLimitedError,
  toWmpError,
  WmpError,
} from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, PeerError, RequestTimeoutError } from './errors.js';
import { requestIdSequence } from './ids.js';
import type { Transport, TransportMessageExtra } from './transport.js';

/** What every handler gets besides its params (MCP's `extra`). */
export interface BaseContext {
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
  /** The request id; undefined for notifications. */
  readonly requestId: JsonRpcId | undefined;
  /** The message being handled. */
  readonly request: JsonRpcRequest | JsonRpcNotification;
  /** What the binding knew about the frame (HTTP session header, Authorization). */
  readonly extra: TransportMessageExtra | undefined;
  /** The frame the message came in, as received: for size checks (a batch's frame holds its other entries too). */
  readonly frame?: string | Uint8Array;
  /** The message is an entry of a batch (`frame` is the whole batch). */
  readonly batched?: boolean;
  /**
   * The params the handler gets when an interceptor replaced the message's own (the decrypted
   * content of an MLS-encrypted message); `request.params` stays what came over the wire.
   */
  readonly params?: unknown;
  /** Sends a notification to the peer, tied to this request (bindings route it with the response). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /**
   * Set by an interceptor for a message this peer passes on instead of handling it (a relay
   * routing a session it does not answer): it runs in place of the method's handler, whatever
   * the method, known or not, and settles with the result.
   */
  readonly pass?: () => unknown;
}

export type RequestHandler<C> = (params: unknown, context: C) => unknown;
export type NotificationHandler<C> = (params: unknown, context: C) => void | Promise<void>;

/**
 * Runs before every incoming request or notification is dispatched: validation, session lookup,
 * authorisation. It returns what the handler's context adds to the base, or throws a WmpError
 * that becomes the answer.
 */
export type Interceptor<C extends BaseContext> = (
  message: JsonRpcRequest | JsonRpcNotification,
  base: BaseContext,
  peer: Peer<C>,
) => Promise<C> | C;

export interface PeerOptions<C extends BaseContext> {
  readonly limits?: ParseLimits;
  /** Default timeout of outgoing requests, ms. */
  readonly requestTimeoutMs?: number;
  /** Most outgoing requests waiting for an answer at once. */
  readonly maxPendingRequests?: number;
  /** Most incoming requests being handled at once; more are refused with -31007. */
  readonly maxConcurrentHandlers?: number;
  readonly interceptor?: Interceptor<C>;
  /**
   * Handlers of both requests and notifications shared by many peers (a server's table), looked
   * up after the peer's own: one table per server instead of two maps per connection.
   */
  readonly sharedHandlers?: ReadonlyMap<string, RequestHandler<C>>;
  /** Called with a handler's unexpected exception (its answer is -32603 without details). */
  readonly onHandlerError?: (error: unknown, method: string) => void;
  /**
   * The typed answer to a handler's unexpected exception when the host has one (a store that is
   * down: a refusal the caller may retry; `onHandlerError` is not called then), else undefined and
   * the answer is -32603.
   */
  readonly refusalOf?: (error: unknown) => WmpError | undefined;
  /**
   * Called once when the connection is gone, after `signal` aborted and before `onclose`. With the
   * peer as argument, so that one function serves every peer of a server (no closure per connection).
   */
  readonly onClose?: (peer: Peer<C>) => void;
  /**
   * Called when an incoming notification is refused (by the interceptor or its handler): it has no
   * answer (JSON-RPC), so this is the only trace of it. Not called for unknown methods.
   */
  readonly onNotificationRefused?: (error: WmpError, message: JsonRpcNotification, peer: Peer<C>) => void;
  /** Called when an incoming request is answered with an error (by the interceptor or its handler). */
  readonly onRequestRefused?: (error: WmpError, method: string, peer: Peer<C>) => void;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

/** What came back for a request sent with `Peer.forward`: the answer as it was on the wire. */
export type ForwardedAnswer = { readonly result: unknown } | { readonly error: JsonRpcErrorObject };

interface Pending {
  /** Settles with the whole response (`forward`), not with its result or a WmpError. */
  readonly raw?: boolean;
  resolve(result: unknown): void;
  reject(error: unknown): void;
  cleanup(): void;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The envelope's reason for a response with neither `result` nor `error` (see `#settleBare`). */
const BARE_RESPONSE = 'a response carries exactly one of result and error';

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<T>).then === 'function';
}

/**
 * A bidirectional JSON-RPC 2.0 endpoint over one transport: it correlates requests and responses,
 * dispatches incoming calls through a method -> handler map, answers batches as one array, and
 * rejects every pending call with `ConnectionClosedError` when the transport closes.
 */
export class Peer<C extends BaseContext = BaseContext> {
  readonly #transport: Transport;
  readonly #limits: ParseLimits;
  readonly #timeoutMs: number;
  readonly #maxPending: number;
  readonly #maxHandlers: number;
  readonly #interceptor: Interceptor<C> | undefined;
  readonly #onHandlerError: ((error: unknown, method: string) => void) | undefined;
  readonly #refusalOf: PeerOptions<C>['refusalOf'];
  readonly #onNotificationRefused: PeerOptions<C>['onNotificationRefused'];
  readonly #onRequestRefused: PeerOptions<C>['onRequestRefused'];
  readonly #onClose: PeerOptions<C>['onClose'];
  readonly #shared: ReadonlyMap<string, RequestHandler<C>> | undefined;
  /** The peer's own handlers, made on the first `set...Handler` (a server's peers have none). */
  #requestHandlers: Map<string, RequestHandler<C>> | undefined;
  #notificationHandlers: Map<string, NotificationHandler<C>> | undefined;
  /** Made on the first outgoing request: a server's peers seldom send one, and idle ones hold none. */
  #pending: Map<JsonRpcId, Pending> | undefined;
  /**
   * Made on the first read of `signal` (an AbortSignal with its listener tables is most of what an
   * idle connection's peer would hold); `#isClosed` is the state itself.
   */
  #closed: AbortController | undefined;
  #isClosed = false;
  /** Made on the first outgoing request: a server's peers seldom send one. */
  #nextId: (() => string) | undefined;
  #activeHandlers = 0;
  #started = false;

  /** Fires once when the connection is gone. */
  onclose?: () => void;
  /**
   * Takes incoming messages this peer does not handle itself: a request or notification for which
   * it returns true, or a response to no request of this peer. A client that also answers sessions
   * over its connection (a responder behind a relay) hands those frames on this way.
   */
  divert?: ((message: JsonRpcMessage) => boolean) | undefined;

  constructor(transport: Transport, options: PeerOptions<C> = {}) {
    this.#transport = transport;
    const maxBytes = Math.min(
      options.limits?.maxBytes ?? Number.POSITIVE_INFINITY,
      transport.maxMessageBytes ?? Number.POSITIVE_INFINITY,
    );
    this.#limits = {
      ...DEFAULT_PARSE_LIMITS,
      ...options.limits,
      maxBytes: Number.isFinite(maxBytes) ? maxBytes : DEFAULT_PARSE_LIMITS.maxBytes,
    };
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxPending = options.maxPendingRequests ?? 1024;
    this.#maxHandlers = options.maxConcurrentHandlers ?? 256;
    this.#interceptor = options.interceptor;
    this.#shared = options.sharedHandlers;
    this.#onHandlerError = options.onHandlerError;
    this.#refusalOf = options.refusalOf;
    this.#onNotificationRefused = options.onNotificationRefused;
    this.#onRequestRefused = options.onRequestRefused;
    this.#onClose = options.onClose;
  }

  get closed(): boolean {
    return this.#isClosed;
  }

  /** Aborted when the connection closes. */
  get signal(): AbortSignal {
    if (this.#closed === undefined) {
      this.#closed = new AbortController();
      if (this.#isClosed) this.#closed.abort(new ConnectionClosedError());
    }
    return this.#closed.signal;
  }

  get transport(): Transport {
    return this.#transport;
  }

  setRequestHandler(method: string, handler: RequestHandler<C>): void {
    this.#requestHandlers ??= new Map();
    this.#requestHandlers.set(method, handler);
  }

  setNotificationHandler(method: string, handler: NotificationHandler<C>): void {
    this.#notificationHandlers ??= new Map();
    this.#notificationHandlers.set(method, handler);
  }

  /** Wires the transport and starts it. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#transport.onmessage = (frame, extra) => {
      void this.#receive(frame, extra);
    };
    this.#transport.onclose = () => this.#onTransportClosed();
    await this.#transport.start();
  }

  /** Sends a request and resolves with its result; a peer error rejects with its WmpError. */
  request(method: string, params?: Record<string, unknown>, options: RequestOptions = {}): Promise<unknown> {
    return this.#request(method, params, options, false);
  }

  /**
   * Sends a request with an id of this peer's own and resolves with the answer as it came (a
   * result, or the error object unchanged): for passing a call made elsewhere on to this peer.
   * Timeouts, aborts and a closed connection reject as for `request`.
   */
  forward(method: string, params?: Record<string, unknown>, options: RequestOptions = {}): Promise<ForwardedAnswer> {
    return this.#request(method, params, options, true) as Promise<ForwardedAnswer>;
  }

  /** Outgoing requests waiting for their answer. */
  get pendingRequests(): number {
    return this.#pending?.size ?? 0;
  }

  #request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions,
    raw: boolean,
  ): Promise<unknown> {
    const refused = this.#refuseRequest(1, options);
    if (refused !== undefined) return refused;
    const message = this.#message(method, params);
    const answer = this.#await(message.id, options, raw);
    this.#transport.send(message).catch((e: unknown) => this.#failSend([message.id], e));
    return answer;
  }

  /**
   * Sends requests of one method in one frame (a JSON-RPC batch), each answered on its own: one
   * promise per entry, in order, each settled as `request`'s is (its result, its error, its own
   * timeout). The peer answers a batch once every entry is handled (its answers come together).
   * The peer must accept batches of this many entries; over `maxPendingRequests` all are refused.
   */
  requestBatch(
    method: string,
    paramsList: readonly Record<string, unknown>[],
    options: RequestOptions = {},
  ): Promise<unknown>[] {
    const refused = this.#refuseRequest(paramsList.length, options);
    if (refused !== undefined) return paramsList.map(() => refused);
    const messages = paramsList.map((params) => this.#message(method, params));
    const answers = messages.map((m) => this.#await(m.id, options, false));
    this.#transport.send(messages).catch((e: unknown) =>
      this.#failSend(
        messages.map((m) => m.id),
        e,
      ),
    );
    return answers;
  }

  /**
   * A rejection for requests that may not be sent now (closed, too many pending), else undefined;
   * an aborted signal throws at once, as it always did.
   */
  #refuseRequest(count: number, options: RequestOptions): Promise<never> | undefined {
    if (this.closed) return Promise.reject(new ConnectionClosedError());
    if ((this.#pending?.size ?? 0) + count > this.#maxPending) {
      return Promise.reject(new PeerError('ERR_TOO_MANY_PENDING'));
    }
    options.signal?.throwIfAborted();
    return undefined;
  }

  #message(method: string, params: Record<string, unknown> | undefined): JsonRpcRequest & { id: string } {
    this.#nextId ??= requestIdSequence();
    const id = this.#nextId();
    return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
  }

  /** Waits for the answer to request `id`: its own timeout, the caller's abort signal. */
  #await(id: string, options: RequestOptions, raw: boolean): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => settle(() => reject(new RequestTimeoutError())),
        options.timeoutMs ?? this.#timeoutMs,
      );
      const onAbort = () => settle(() => reject(options.signal?.reason));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#pending?.delete(id);
      };
      const settle = (fn: () => void) => {
        cleanup();
        fn();
      };
      this.#pending ??= new Map();
      this.#pending.set(id, raw ? { raw, resolve, reject, cleanup } : { resolve, reject, cleanup });
    });
  }

  /** The frame of these requests could not be sent: each still waiting fails. */
  #failSend(ids: readonly string[], e: unknown): void {
    const error = this.closed ? new ConnectionClosedError() : e;
    for (const id of ids) {
      const pending = this.#pending?.get(id);
      if (pending === undefined) continue;
      pending.cleanup();
      pending.reject(error);
    }
  }

  /**
   * Sends a notification (no answer). `text`, when given, is the same notification already JSON text (as
   * `JSON.stringify` of `{ jsonrpc, method, params }` writes it): a binding that sends text
   * (`Transport.sendText`) sends it as it is, so a relay forwarding a stored message does not
   * write it again; any other binding gets `method` and `params`.
   */
  async notify(method: string, params?: Record<string, unknown>, sessionId?: string, text?: string): Promise<void> {
    if (this.closed) throw new ConnectionClosedError();
    const options = sessionId === undefined ? {} : { sessionId };
    if (text !== undefined && this.#transport.sendText) return this.#transport.sendText(text, options);
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    await this.#transport.send(message, options);
  }

  /** Sends any prepared message (used by servers that route others' messages). */
  async send(message: JsonRpcMessage): Promise<void> {
    if (this.closed) throw new ConnectionClosedError();
    await this.#transport.send(message);
  }

  async close(): Promise<void> {
    await this.#transport.close();
    this.#onTransportClosed();
  }

  #onTransportClosed(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#closed?.abort(new ConnectionClosedError());
    for (const pending of [...(this.#pending?.values() ?? [])]) {
      pending.cleanup();
      pending.reject(new ConnectionClosedError());
    }
    this.#onClose?.(this);
    this.onclose?.();
  }

  async #receive(frame: string | Uint8Array, extra: TransportMessageExtra | undefined): Promise<void> {
    let parsed: ReturnType<typeof parseMessage>;
    try {
      parsed = parseMessage(frame, this.#limits);
    } catch (e) {
      if (this.#settleBare(frame, e)) return;
      await this.#reply(toWmpError(e).toResponse(null));
      return;
    }
    if (parsed.kind === 'message') {
      const answer = await this.#handle(parsed.message, extra, frame, false);
      if (answer) await this.#reply(answer);
      return;
    }
    if (parsed.kind === 'invalid') {
      // Well formed, refused where its id is known (its params): a request hears it; nothing else is answered.
      if (parsed.id !== null) await this.#reply(parsed.invalid.toResponse(parsed.id));
      return;
    }
    const answers = await Promise.all(
      parsed.entries.map((entry) =>
        isInvalidEntry(entry)
          ? (entry as InvalidBatchEntry).invalid.toResponse((entry as InvalidBatchEntry).id)
          : this.#handle(entry, extra, frame, true),
      ),
    );
    const responses = answers.filter((a): a is JsonRpcResponse => a !== undefined);
    if (responses.length > 0) await this.#reply(responses);
  }

  async #reply(answer: JsonRpcResponse | JsonRpcResponse[]): Promise<void> {
    if (this.closed) return;
    const related = Array.isArray(answer) ? undefined : answer.id;
    try {
      await this.#transport.send(
        answer,
        related === null || related === undefined ? {} : { relatedRequestId: related },
      );
    } catch {
      // The connection went away while answering: nothing left to tell.
    }
  }

  /** Handles one message; returns the response to send, if any. */
  async #handle(
    message: JsonRpcMessage,
    extra: TransportMessageExtra | undefined,
    frame: string | Uint8Array,
    batched: boolean,
  ): Promise<JsonRpcResponse | undefined> {
    if (!('method' in message)) {
      this.#settle(message);
      return undefined;
    }
    if (this.divert?.(message) === true) return undefined;
    const isRequest = 'id' in message;
    const requestId = isRequest ? (message as JsonRpcRequest).id : undefined;
    if (isRequest && this.#activeHandlers >= this.#maxHandlers)
      return new RateLimitedError({ reason: 'too many requests in flight' }).toResponse(requestId!);
    const handler =
      (isRequest ? this.#requestHandlers?.get(message.method) : this.#notificationHandlers?.get(message.method)) ??
      this.#shared?.get(message.method);
    // With an interceptor, a message of no known method may still be one it passes on.
    if (!handler && !this.#interceptor) {
      return isRequest ? new MethodNotFoundError({ reason: 'unknown method' }).toResponse(requestId!) : undefined; // unknown notifications are ignored (JSON-RPC)
    }
    this.#activeHandlers++;
    try {
      const peer = this;
      const base: BaseContext = {
        // Read only by handlers that want it: the signal is made then, not for every connection.
        get signal() {
          return peer.signal;
        },
        requestId,
        request: message,
        extra,
        frame,
        batched,
        notify: (method, params) => this.notify(method, params),
      };
      // Await only real promises: each needless await is a microtask hop on the hot path.
      let context: C;
      try {
        const intercepted = this.#interceptor ? this.#interceptor(message, base, this) : (base as C);
        context = isPromiseLike(intercepted) ? await intercepted : intercepted;
      } catch (e) {
        // A method nobody here knows is unknown, whatever the interceptor found wrong with it.
        if (!handler)
          return isRequest ? new MethodNotFoundError({ reason: 'unknown method' }).toResponse(requestId!) : undefined;
        throw e;
      }
      const run = context.pass;
      if (!run && !handler)
        return isRequest ? new MethodNotFoundError({ reason: 'unknown method' }).toResponse(requestId!) : undefined;
      const returned = run ? run() : handler!(context.params ?? message.params ?? {}, context);
      const result = isPromiseLike(returned) ? await returned : returned;
      return isRequest ? { jsonrpc: '2.0', id: requestId!, result: result === undefined ? {} : result } : undefined;
    } catch (e) {
      let error: WmpError;
      if (e instanceof WmpError) error = e;
      else {
        const refusal = this.#refusalOf?.(e);
        if (refusal === undefined) this.#onHandlerError?.(e, message.method);
        error = refusal ?? toWmpError(e);
      }
      if (isRequest) {
        this.#onRequestRefused?.(error, message.method, this);
        return error.toResponse(requestId!);
      }
      this.#onNotificationRefused?.(error, message as JsonRpcNotification, this);
      return undefined;
    } finally {
      this.#activeHandlers--;
    }
  }

  /**
   * An answer to a request of ours that carries neither `result` nor `error`: what wmp-js sends for
   * a handler that returned nothing (`result: undefined`, which JSON drops). It settles that
   * request with `null` instead of leaving it to time out; anything else stays invalid.
   */
  #settleBare(frame: string | Uint8Array, error: unknown): boolean {
    const reason = (error as { data?: { reason?: unknown } }).data?.reason;
    if (this.#pending === undefined || reason !== BARE_RESPONSE) return false;
    let value: unknown;
    try {
      value = JSON.parse(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
    } catch {
      return false;
    }
    const id = (value as { id?: unknown }).id;
    if ((typeof id !== 'string' && typeof id !== 'number') || !this.#pending.has(id)) return false;
    this.#settle({ jsonrpc: '2.0', id, result: null });
    return true;
  }

  #settle(response: JsonRpcResponse): void {
    if (response.id === null) return;
    const pending = this.#pending?.get(response.id);
    if (!pending) {
      this.divert?.(response); // late, or never ours: someone else's, or nothing to do
      return;
    }
    pending.cleanup();
    if (pending.raw) pending.resolve('error' in response ? { error: response.error } : { result: response.result });
    else if ('error' in response) pending.reject(errorFromJsonRpc(response.error));
    else pending.resolve(response.result);
  }
}
