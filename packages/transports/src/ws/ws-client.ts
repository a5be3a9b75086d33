import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { Transport, TransportMessageExtra, TransportSendOptions } from '@wmp/session';
import { WebSocketTransportError } from './ws-errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, WMP_SUBPROTOCOL, WsCloseCode } from './ws-protocol.js';
import { toWebSocketUrl } from './ws-url.js';

/** The part of the WHATWG WebSocket API this transport uses. Browsers' and `ws`'s WebSocket both have it. */
export interface WebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  // biome-ignore lint/suspicious/noExplicitAny: the DOM and `ws` type their events differently; both pass this shape.
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: any) => void): void;
}

/**
 * A WebSocket constructor. The third argument is only understood by `ws` (Node), which takes
 * upgrade headers and a payload limit there; browsers ignore it.
 */
export type WebSocketConstructorLike = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string>; maxPayload?: number },
) => WebSocketLike;

export interface WebSocketClientTransportOptions {
  /** `wss:` (or `https:`) endpoint; `ws:` only with `allowInsecure` or to a loopback host. */
  readonly url: string | URL;
  /** Defaults to `globalThis.WebSocket`. Node 20 has none: pass `WebSocket` from `ws`. */
  readonly WebSocket?: WebSocketConstructorLike;
  /** Subprotocols to request; default `['wmp.v1']` (transport §3.1). */
  readonly protocols?: readonly string[];
  /** Allows `ws:` to a non-loopback host. Insecure: for tests and trusted networks only. */
  readonly allowInsecure?: boolean;
  /** Headers of the upgrade request (e.g. `Authorization`, transport §3.4). `ws` only: browsers cannot set them. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Largest frame accepted, in bytes (default 1 MiB). `ws` enforces it before buffering a frame
   * (closing with 1009); in browsers the Peer refuses larger frames before parsing.
   */
  readonly maxMessageBytes?: number;
}

const OPEN = 1;
const CLOSED = 3;

/** The TCP socket under `ws`'s WebSocket in Node (`ws` keeps it as `_socket`); browsers have none. */
type Corkable = { cork(): void; uncork(): void; destroyed?: boolean };

/** Node's `process`, for its `nextTick`; undefined in browsers, where frames are not corked. */
const nodeProcess = (globalThis as { process?: { nextTick?: (run: () => void) => void } }).process;

/**
 * WMP over one outgoing WebSocket (transport §3). Browser-safe. Each text frame carries one
 * message or one batch; a binary frame is a protocol error and closes the connection with 1003.
 * Keepalive pings are answered by the WebSocket implementation itself.
 */
export class WebSocketClientTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly maxMessageBytes: number;

  readonly #url: string;
  readonly #ctor: WebSocketConstructorLike | undefined;
  readonly #protocols: string[];
  readonly #headers: Record<string, string> | undefined;
  #socket: WebSocketLike | undefined;
  #started = false;
  #closed = false;
  /** Set once a bad frame was seen: later frames of the closing connection are dropped. */
  #refused = false;
  #corked = false;
  readonly #closedSignal: Promise<void>;
  #resolveClosed!: () => void;

  constructor(options: WebSocketClientTransportOptions) {
    // Checked here so that a wrong URL fails where it is written, not at the first connect.
    this.#url = toWebSocketUrl(options.url, options.allowInsecure ?? false);
    this.#ctor = options.WebSocket;
    this.#protocols = [...(options.protocols ?? [WMP_SUBPROTOCOL])];
    this.#headers = options.headers ? { ...options.headers } : undefined;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#closedSignal = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
  }

  /** The subprotocol the server selected (`''` if it selected none). */
  get protocol(): string {
    return this.#socket?.protocol ?? '';
  }

  start(): Promise<void> {
    if (this.#started) return Promise.reject(new WebSocketTransportError('ERR_WS_ALREADY_STARTED'));
    this.#started = true;
    const Ctor = this.#ctor ?? (globalThis as { WebSocket?: WebSocketConstructorLike }).WebSocket;
    if (!Ctor) return Promise.reject(new WebSocketTransportError('ERR_WS_UNAVAILABLE'));
    const nodeOptions = { maxPayload: this.maxMessageBytes, ...(this.#headers ? { headers: this.#headers } : {}) };
    let socket: WebSocketLike;
    try {
      socket = new Ctor(this.#url, this.#protocols, nodeOptions);
    } catch (e) {
      this.#finish();
      return Promise.reject(new WebSocketTransportError('ERR_WS_CONNECT', { cause: e }));
    }
    socket.binaryType = 'arraybuffer';
    this.#socket = socket;
    return new Promise((resolve, reject) => {
      let opened = false;
      socket.addEventListener('open', () => {
        opened = true;
        resolve();
      });
      socket.addEventListener('message', (event: { data: unknown }) => this.#receive(event.data));
      socket.addEventListener('error', (event: { error?: unknown }) => {
        if (opened) this.onerror?.(new WebSocketTransportError('ERR_WS_SOCKET', { cause: event.error }));
        else reject(new WebSocketTransportError('ERR_WS_CONNECT', { cause: event.error }));
      });
      socket.addEventListener('close', () => {
        if (!opened) reject(new WebSocketTransportError('ERR_WS_CONNECT'));
        this.#finish();
      });
    });
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[], _options?: TransportSendOptions): Promise<void> {
    const socket = this.#socket;
    if (this.#closed || !socket || socket.readyState !== OPEN) throw new WebSocketTransportError('ERR_WS_NOT_OPEN');
    this.#cork(socket);
    socket.send(JSON.stringify(message));
  }

  /**
   * Frames sent in one turn of the event loop (a relay's peer link sends a page of forwards, or
   * the acknowledgements of a burst of statuses) leave in one write: `ws` writes every frame with
   * its own syscall otherwise. In Node only (a socket to cork, `process.nextTick` to uncork once
   * the turn's callbacks and microtasks ran); a browser's WebSocket writes as it does.
   */
  #cork(socket: WebSocketLike): void {
    if (this.#corked || nodeProcess?.nextTick === undefined) return;
    const raw = (socket as unknown as { _socket?: Partial<Corkable> })._socket;
    if (raw === undefined || raw.destroyed || typeof raw.cork !== 'function') return;
    this.#corked = true;
    raw.cork();
    nodeProcess.nextTick(() => {
      this.#corked = false;
      (raw as Corkable).uncork();
    });
  }

  async close(): Promise<void> {
    const socket = this.#socket;
    if (!socket || socket.readyState === CLOSED) {
      this.#finish();
      return;
    }
    socket.close(WsCloseCode.Normal);
    await this.#closedSignal;
  }

  #receive(data: unknown): void {
    if (this.#closed || this.#refused) return;
    if (typeof data === 'string') {
      try {
        this.onmessage?.(data);
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
      return;
    }
    // Binary frames are reserved (transport §3.2): refuse rather than guess an encoding.
    this.#refused = true;
    this.onerror?.(new WebSocketTransportError('ERR_WS_BINARY_FRAME'));
    this.#socket?.close(WsCloseCode.UnsupportedData);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resolveClosed();
    this.onclose?.();
  }
}
