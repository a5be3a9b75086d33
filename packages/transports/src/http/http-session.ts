import type { JsonRpcId, JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { CloseReason, Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';
import type { ByteBudget } from '../byte-budget.js';
import { HttpTransportError } from './http-errors.js';
import { announcedSessionId, type PostBody, withSessionToken } from './http-frames.js';
import { PendingPost } from './http-pending.js';
import { WMP_SSE_EVENT } from './http-protocol.js';
import { ReplayBuffer } from './http-replay.js';
import { SseWriter } from './sse-writer.js';

/** The bounds of one HTTP session (set by the binding). */
export interface HttpSessionLimits {
  readonly maxMessageBytes: number;
  readonly replayEvents: number;
  readonly replayChars: number;
  readonly maxSubscribers: number;
  readonly maxPendingPosts: number;
  readonly pendingTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly maxQueuedBytes: number;
  /** Replay characters across every session of the binding. */
  readonly replayBudget?: ByteBudget | undefined;
  /** Bytes queued to slow SSE readers across the server. */
  readonly outboundBudget?: ByteBudget | undefined;
}

/** How a session tells its binding that it learned its id or ended, and gets its token. */
export interface HttpSessionHooks {
  register(session: HttpSession, id: string): void;
  closed(session: HttpSession): void;
  /** The binding secret for a session id (random, or keyed so that other nodes can check it). */
  issueToken(id: string): string;
  /** The server sent request `id` to the client on this session (its answer may name no session). */
  asked(session: HttpSession, id: JsonRpcId): void;
}

/**
 * The Transport of one HTTP session (one per session: go-wmp gives each session id its own Peer
 * too). Frames arrive from POST bodies; what the Peer sends goes back in the reply of the POST
 * that carried the request, or else to every SSE stream of the session.
 */
/**
 * What the request that opened an HTTP session says about its client: its address and the TLS
 * client certificate of its connection (later requests of the session are bound by its token).
 */
export interface HttpPeerInfo {
  readonly remoteAddress?: string | undefined;
  readonly peerCertificates?: readonly Uint8Array[] | undefined;
}

export class HttpSessionTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onreachable?: () => void;
  readonly maxMessageBytes: number;
  readonly remoteAddress?: string;
  readonly peerCertificates?: readonly Uint8Array[];
  readonly #session: HttpSession;

  /** Made by the HTTP binding, never directly. */
  constructor(session: HttpSession, peer: HttpPeerInfo) {
    this.#session = session;
    this.maxMessageBytes = session.limits.maxMessageBytes;
    if (peer.remoteAddress !== undefined) this.remoteAddress = peer.remoteAddress;
    if (peer.peerCertificates !== undefined) this.peerCertificates = peer.peerCertificates;
  }

  /** The session id, once the Peer's create (or resume) response announced it. */
  get sessionId(): string | undefined {
    return this.#session.id;
  }

  /**
   * Online only while an event stream is open (docs/architecture.md, "Transports"): else messages
   * wait in the relay's queue.
   */
  get reachable(): boolean {
    return this.#session.subscribers > 0;
  }

  async start(): Promise<void> {
    this.#session.start();
  }

  send(message: JsonRpcMessage | readonly JsonRpcMessage[], options?: TransportSendOptions): Promise<void> {
    return this.#session.send(message, options);
  }

  close(reason?: CloseReason): Promise<void> {
    return this.#session.close(reason);
  }

  /** The WMP session this HTTP session is ended: its token and streams stop now, the rest once answered. */
  sessionEnded(): void {
    this.#session.end();
  }
}

/** The binding-side state of one HTTP session. Not exported from the package. */
export class HttpSession {
  readonly transport: HttpSessionTransport;
  readonly limits: HttpSessionLimits;
  id: string | undefined;
  /** The binding secret, set with the id. */
  token: string | undefined;
  lastActive = Date.now();
  /** Why it was closed, once it was (the binding answers an `overloaded` refusal with 503). */
  closeReason: CloseReason | undefined;
  /** What the host's `onTransport` resolved with, handed back when the client ends the session. */
  host: unknown;

  readonly #hooks: HttpSessionHooks;
  readonly #pending: PendingPost[] = [];
  readonly #subscribers = new Set<SseWriter>();
  readonly #replay: ReplayBuffer;
  #queue: Array<[Uint8Array | string, TransportMessageExtra | undefined]> | undefined = [];
  #seq = 0;
  /** The last event written to at least one live subscriber; later ones are held for the next. */
  #deliveredUpTo = 0;
  #closed = false;
  /** The WMP session ended: no new request or stream, closed once the POSTs in flight are answered. */
  #ending = false;

  constructor(limits: HttpSessionLimits, hooks: HttpSessionHooks, peer: HttpPeerInfo = {}) {
    this.limits = limits;
    this.#hooks = hooks;
    this.#replay = new ReplayBuffer(limits.replayEvents, limits.replayChars, limits.replayBudget);
    this.transport = new HttpSessionTransport(this, peer);
  }

  /** Closed, or ending (nothing new is taken once the WMP session it carries ended). */
  get closed(): boolean {
    return this.#closed || this.#ending;
  }

  get pendingPosts(): number {
    return this.#pending.length;
  }

  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Nothing open and nothing heard for `idleMs`. */
  isIdle(now: number, idleMs: number): boolean {
    return this.#pending.length === 0 && this.#subscribers.size === 0 && now - this.lastActive >= idleMs;
  }

  touch(): void {
    this.lastActive = Date.now();
  }

  start(): void {
    const queued = this.#queue ?? [];
    this.#queue = undefined;
    for (const [frame, extra] of queued) this.#emit(frame, extra);
  }

  /** Hands one POST body to the Peer (kept until `start()`). */
  deliver(frame: Uint8Array | string, extra: TransportMessageExtra | undefined): void {
    if (this.#closed) return;
    this.touch();
    if (this.#queue) this.#queue.push([frame, extra]);
    else this.#emit(frame, extra);
  }

  // A throwing handler must not turn into a 500 for this POST or break the session.
  #emit(frame: Uint8Array | string, extra: TransportMessageExtra | undefined): void {
    try {
      this.transport.onmessage?.(frame, extra);
    } catch (e) {
      this.transport.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** Registers a POST that waits for the answers to `body`. The caller checks `pendingPosts` first. */
  await(body: PostBody, streaming: boolean): PendingPost {
    const post = new PendingPost(body, streaming, this.limits.pendingTimeoutMs, (p) => {
      const i = this.#pending.indexOf(p);
      if (i >= 0) this.#pending.splice(i, 1);
      this.touch();
      if (this.#ending && this.#pending.length === 0) void this.close();
    });
    this.#pending.push(post);
    return post;
  }

  /**
   * Opens an SSE stream. With `lastEventId` it first replays the kept events after it; without,
   * it replays the events sent while no stream was open (so nothing sent between the create
   * reply and the first GET is lost). Undefined when the session has its maximum of streams.
   */
  subscribe(lastEventId: number | undefined): SseWriter | undefined {
    if (this.closed || this.#subscribers.size >= this.limits.maxSubscribers) return undefined;
    const writer = new SseWriter({
      keepAliveMs: this.limits.keepAliveMs,
      maxQueuedBytes: this.limits.maxQueuedBytes,
      ...(this.limits.outboundBudget ? { budget: this.limits.outboundBudget } : {}),
      onEnd: () => {
        this.#subscribers.delete(writer);
        this.touch();
      },
    });
    writer.comment('wmp');
    for (const event of this.#replay.after(lastEventId ?? this.#deliveredUpTo)) {
      writer.write({ event: WMP_SSE_EVENT, id: event.seq, data: event.data });
      this.#deliveredUpTo = Math.max(this.#deliveredUpTo, event.seq);
    }
    // A replay larger than the reader's queue ends the writer at once; it is not a live subscriber then.
    if (!writer.ended) {
      this.#subscribers.add(writer);
      if (this.#subscribers.size === 1) queueMicrotask(() => this.transport.onreachable?.());
    }
    this.touch();
    return writer;
  }

  /** The next event id (ids are unique in the session, whichever stream carries the event). */
  nextEventId(): number {
    return ++this.#seq;
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[], options: TransportSendOptions = {}): Promise<void> {
    if (this.#closed) throw new HttpTransportError('ERR_HTTP_CLOSED');
    // The first response that announces a session id names this HTTP session (the create reply).
    const announced = this.id === undefined ? announcedSessionId(message) : undefined;
    if (announced !== undefined) this.#register(announced);
    if (this.id !== undefined && this.token !== undefined) message = withSessionToken(message, this.id, this.token);
    for (const m of Array.isArray(message) ? message : [message]) {
      if ('method' in m && 'id' in m) this.#hooks.asked(this, (m as { id: JsonRpcId }).id);
    }
    const frame = JSON.stringify(message);
    const related: JsonRpcId | undefined = options.relatedRequestId;
    for (const post of this.#pending) {
      if (!post.offer(message, frame, related)) continue;
      if (announced !== undefined && this.token !== undefined) {
        post.sessionHeaders = { sessionId: announced, token: this.token };
      }
      return;
    }
    this.#publish(frame);
  }

  /**
   * The WMP session it carries ended: the binding forgets its token and id and its streams end at
   * once (so nothing new reaches it), and it closes once the POSTs in flight got their answers
   * (the one that carried the close gets its own).
   */
  end(): void {
    if (this.#closed || this.#ending) return;
    this.#ending = true;
    this.#hooks.closed(this);
    for (const writer of [...this.#subscribers]) writer.close();
    if (this.#pending.length === 0) void this.close();
  }

  async close(reason: CloseReason = 'normal'): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.closeReason = reason;
    this.#queue = undefined;
    this.#replay.clear();
    for (const post of [...this.#pending]) post.settle('closed');
    for (const writer of [...this.#subscribers]) writer.close();
    this.#hooks.closed(this);
    this.transport.onclose?.();
  }

  #register(id: string): void {
    this.id = id;
    this.token = this.#hooks.issueToken(id);
    this.#hooks.register(this, id);
  }

  /**
   * Carries an existing WMP session from the start: a request named it with a token another node
   * issued (a cluster), so this HTTP session is bound to it with that token.
   */
  adopt(id: string, token: string): void {
    this.id = id;
    this.token = token;
    this.#hooks.register(this, id);
  }

  #publish(data: string): void {
    const seq = this.nextEventId();
    this.#replay.push({ seq, data });
    let delivered = false;
    for (const writer of this.#subscribers) {
      if (writer.write({ event: WMP_SSE_EVENT, id: seq, data })) delivered = true;
    }
    if (delivered) this.#deliveredUpTo = seq;
  }
}
