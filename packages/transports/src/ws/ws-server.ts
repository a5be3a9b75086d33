import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { CloseReason, Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';
import type { RawData, WebSocket } from 'ws';
import type { ByteBudget } from '../byte-budget.js';
import type { SourceReadRate } from '../read-rate.js';
import { WebSocketTransportError } from './ws-errors.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_PING_INTERVAL_MS,
  DEFAULT_PONG_TIMEOUT_MS,
  WsCloseCode,
} from './ws-protocol.js';

export interface WebSocketServerTransportOptions {
  /** How often to ping; default 30 s (transport §3.3). */
  readonly pingIntervalMs?: number;
  /** Terminate the connection after this long without a pong; default 90 s (transport §3.3). */
  readonly pongTimeoutMs?: number;
  /**
   * Largest frame accepted, in bytes; default 1 MiB. Set the same value as the `ws` server's
   * `maxPayload`, which refuses larger frames from their header, before buffering them (1009);
   * this transport checks it again for sockets accepted by a server with a larger limit.
   */
  readonly maxMessageBytes?: number;
  /**
   * Most bytes sent and not yet written to the socket for a peer that reads slowly; a send that
   * would pass it closes the connection (1013) at once, whether or not the peer reads again.
   * Default 8 MiB.
   */
  readonly maxBufferedBytes?: number;
  /** Those bytes across every connection of the server: a send that does not fit closes its connection (1013). */
  readonly outboundBudget?: ByteBudget;
  /** The peer's address (a key for per-source limits; never logged). */
  readonly remoteAddress?: string;
  /** The certificate chain the peer presented in its TLS handshake (DER, leaf first), for `mtls`. */
  readonly peerCertificates?: readonly Uint8Array[];
  /** How long `close()` waits for the closing handshake before terminating; default 5 s. */
  readonly closeTimeoutMs?: number;
  /** The read rate of the peer's source: a source over it is not read until it may be again. */
  readonly readRate?: { readonly rate: SourceReadRate; readonly source: string };
}

const OPEN = 1;
const CLOSED = 3;

/** How each reason a server closes for is said on the wire (RFC 6455 §7.4). */
const CLOSE_CODES: Readonly<Record<CloseReason, number>> = {
  normal: WsCloseCode.Normal,
  overloaded: WsCloseCode.TryAgainLater,
  timeout: WsCloseCode.PolicyViolation,
};

function rawLength(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.byteLength, 0) : data.byteLength;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  // ws hands text frames over as Buffers: decode in place (Buffer.from would copy first).
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** The TCP socket under a `ws` connection (`ws` keeps it as `_socket`), to cork it. */
type Corkable = { cork(): void; uncork(): void; destroyed?: boolean };

/** The transport of each socket, for the listeners every socket shares (`this` is the socket). */
const transportOf = new WeakMap<WebSocket, WebSocketServerTransport>();

/** What the shared listeners do to a transport: set by the class, which alone reaches its private state. */
let socketEvents: {
  message(t: WebSocketServerTransport, data: RawData, isBinary: boolean): void;
  pong(t: WebSocketServerTransport): void;
  close(t: WebSocketServerTransport): void;
};

function onMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
  const t = transportOf.get(this);
  if (t) socketEvents.message(t, data, isBinary);
}

function onPong(this: WebSocket): void {
  const t = transportOf.get(this);
  if (t) socketEvents.pong(t);
}

function onError(this: WebSocket, e: Error): void {
  transportOf.get(this)?.onerror?.(new WebSocketTransportError('ERR_WS_SOCKET', { cause: e }));
}

function onClose(this: WebSocket): void {
  const t = transportOf.get(this);
  if (t) socketEvents.close(t);
}

/**
 * WMP over one accepted `ws` connection (Node). `ws` has already checked that text frames are
 * valid UTF-8 (1007 otherwise) and refused frames over the server's `maxPayload` (1009) before
 * buffering them. This transport refuses binary frames (1003), keeps the connection alive with
 * pings and terminates it when the peer stops answering.
 *
 * Listeners are attached at construction, so frames that arrive before `start()` are kept and
 * delivered by it.
 */
export class WebSocketServerTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly maxMessageBytes: number;
  readonly remoteAddress?: string;
  readonly peerCertificates?: readonly Uint8Array[];

  readonly #socket: WebSocket;
  readonly #maxBufferedBytes: number;
  readonly #budget: ByteBudget | undefined;
  /** Bytes handed to `ws` and not yet written out (reserved in the budget). */
  #outstanding = 0;
  readonly #closeTimeoutMs: number;
  readonly #readRate: WebSocketServerTransportOptions['readRate'];
  /** Set while the socket is not read (its source is over its read rate). */
  #resumeTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #pongTimeoutMs: number;
  readonly #pinger: ReturnType<typeof setInterval> | undefined;
  #lastPong = Date.now();
  #queue: string[] | undefined = [];
  #started = false;
  #closed = false;
  #notified = false;
  #refused = false;
  #corked = false;
  /** Made by the first `close()` that has to wait (idle connections never need one). */
  #closedSignal: Promise<void> | undefined;
  #resolveClosed: (() => void) | undefined;

  constructor(socket: WebSocket, options: WebSocketServerTransportOptions = {}) {
    this.#socket = socket;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.#budget = options.outboundBudget;
    if (options.remoteAddress !== undefined) this.remoteAddress = options.remoteAddress;
    if (options.peerCertificates !== undefined) this.peerCertificates = options.peerCertificates;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    this.#readRate = options.readRate;
    this.#pongTimeoutMs = options.pongTimeoutMs ?? DEFAULT_PONG_TIMEOUT_MS;
    // Shared listeners (`this` is the socket) rather than four closures per connection.
    transportOf.set(socket, this);
    socket.on('message', onMessage);
    socket.on('pong', onPong);
    socket.on('error', onError);
    socket.on('close', onClose);
    if (socket.readyState === CLOSED) {
      this.#closed = true;
      return;
    }
    this.#pinger = setInterval(() => this.#keepalive(), options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
    this.#pinger.unref?.();
  }

  static {
    socketEvents = {
      message: (t, data, isBinary) => t.#receive(data, isBinary),
      pong: (t) => {
        t.#lastPong = Date.now();
      },
      close: (t) => t.#finish(),
    };
  }

  /** The subprotocol agreed in the handshake (`wmp.v1` when the client asked for it). */
  get protocol(): string {
    return this.#socket.protocol;
  }

  async start(): Promise<void> {
    if (this.#started) throw new WebSocketTransportError('ERR_WS_ALREADY_STARTED');
    this.#started = true;
    const queued = this.#queue ?? [];
    this.#queue = undefined;
    for (const frame of queued) this.#emit(frame);
    if (this.#closed) this.#notifyClosed();
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[], _options?: TransportSendOptions): Promise<void> {
    this.#sendText(JSON.stringify(message));
  }

  /** One message already JSON text: sent as it is, under the same buffer bounds as `send`. */
  async sendText(text: string, _options?: TransportSendOptions): Promise<void> {
    this.#sendText(text);
  }

  #sendText(text: string): void {
    const socket = this.#socket;
    if (this.#closed || socket.readyState !== OPEN) throw new WebSocketTransportError('ERR_WS_NOT_OPEN');
    // UTF-16 length: a bound on the UTF-8 bytes within a factor of 3, without encoding twice.
    const size = text.length;
    // A peer that never reads would otherwise grow this queue without bound, and many such peers
    // the server's memory: over its share, or over the server's budget, it is closed.
    if (this.#outstanding + size > this.#maxBufferedBytes || (this.#budget && !this.#budget.tryReserve(size))) {
      const error = new WebSocketTransportError('ERR_WS_SLOW_CONSUMER');
      this.onerror?.(error);
      socket.close(WsCloseCode.TryAgainLater);
      throw error;
    }
    this.#outstanding += size;
    this.#cork();
    socket.send(text, (error) => this.#written(size, error));
  }

  /** `ws` wrote a frame out (or gave up on it when the socket closed): its bytes are free again. */
  #written(size: number, _error?: Error): void {
    // After the socket closed everything outstanding was given back at once (see #finish).
    if (this.#closed) return;
    this.#outstanding -= size;
    this.#budget?.release(size);
  }

  /**
   * Frames sent in one turn of the event loop (a relay forwards a burst to one connection, then
   * answers it) leave in one write: `ws` writes every frame with its own syscall otherwise. The
   * socket is corked on the first send and uncorked once the turn's callbacks and microtasks ran.
   */
  #cork(): void {
    if (this.#corked) return;
    const raw = (this.#socket as unknown as { _socket?: Corkable })._socket;
    if (raw === undefined || raw.destroyed) return;
    this.#corked = true;
    raw.cork();
    process.nextTick(WebSocketServerTransport.#uncork, this, raw);
  }

  static #uncork(transport: WebSocketServerTransport, raw: Corkable): void {
    transport.#corked = false;
    raw.uncork();
  }

  async close(reason: CloseReason = 'normal'): Promise<void> {
    if (this.#closed) return;
    if (this.#socket.readyState !== CLOSED) this.#socket.close(CLOSE_CODES[reason]);
    const timer = setTimeout(() => this.#socket.terminate(), this.#closeTimeoutMs);
    timer.unref?.();
    if (this.#closed) {
      // Closed within close() itself: nothing left to wait for.
      clearTimeout(timer);
      return;
    }
    this.#closedSignal ??= new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    await this.#closedSignal;
    clearTimeout(timer);
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (this.#closed || this.#refused) return;
    if (isBinary) {
      this.#refuse(new WebSocketTransportError('ERR_WS_BINARY_FRAME'), WsCloseCode.UnsupportedData);
      return;
    }
    const length = rawLength(data);
    if (length > this.maxMessageBytes) {
      this.#refuse(new WebSocketTransportError('ERR_WS_SOCKET'), WsCloseCode.MessageTooBig);
      return;
    }
    if (this.#readRate !== undefined) this.#charge(this.#readRate, length);
    const frame = rawText(data);
    if (this.#queue) this.#queue.push(frame);
    else this.#emit(frame);
  }

  /**
   * This frame is handled; when it put the source over its rate the socket is not read again
   * until the source may be (what `ws` already holds may still arrive): the frames beyond cost
   * no parsing and no answers, and the peer's writes back up into its own TCP buffers.
   */
  #charge(readRate: NonNullable<WebSocketServerTransportOptions['readRate']>, length: number): void {
    const waitMs = readRate.rate.charge(readRate.source, length);
    if (waitMs === 0 || this.#resumeTimer !== undefined) return;
    this.#socket.pause();
    this.#resumeTimer = setTimeout(WebSocketServerTransport.#resumeReading, waitMs, this);
    this.#resumeTimer.unref?.();
  }

  static #resumeReading(transport: WebSocketServerTransport): void {
    transport.#resumeTimer = undefined;
    if (!transport.#closed) transport.#socket.resume();
  }

  // A throwing handler would otherwise escape into ws's socket code.
  #emit(frame: string): void {
    try {
      this.onmessage?.(frame);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  #refuse(error: WebSocketTransportError, code: number): void {
    this.#refused = true;
    this.onerror?.(error);
    this.#socket.close(code);
  }

  #keepalive(): void {
    if (Date.now() - this.#lastPong >= this.#pongTimeoutMs) {
      this.onerror?.(new WebSocketTransportError('ERR_WS_PONG_TIMEOUT'));
      this.#socket.terminate();
      return;
    }
    this.#socket.ping();
  }

  #finish(): void {
    if (this.#closed && this.#notified) return;
    this.#closed = true;
    // Write callbacks of frames that never left may come late or not at all: release them now.
    this.#budget?.release(this.#outstanding);
    this.#outstanding = 0;
    clearInterval(this.#pinger);
    clearTimeout(this.#resumeTimer);
    this.#resolveClosed?.();
    if (this.#started) this.#notifyClosed();
  }

  #notifyClosed(): void {
    if (this.#notified) return;
    this.#notified = true;
    this.onclose?.();
  }
}
