import { TransportError } from '../errors.js';

/** Why a WebSocket transport failed. Stable codes; the messages are fixed and carry no peer data. */
export type WebSocketTransportErrorCode =
  /** `ws:` to a non-loopback host without `allowInsecure` (the spec requires TLS). */
  | 'ERR_WS_INSECURE_URL'
  /** No WebSocket constructor given and none in `globalThis` (Node 20: pass `ws`'s). */
  | 'ERR_WS_UNAVAILABLE'
  | 'ERR_WS_ALREADY_STARTED'
  /** The connection could not be opened. */
  | 'ERR_WS_CONNECT'
  /** `send` on a connection that is not open. */
  | 'ERR_WS_NOT_OPEN'
  /** A binary frame arrived; WMP frames are text (transport §3.2). The connection is closed with 1003. */
  | 'ERR_WS_BINARY_FRAME'
  /** The peer stopped answering pings (transport §3.3). */
  | 'ERR_WS_PONG_TIMEOUT'
  /** The peer reads too slowly: more than the allowed bytes were queued for it. */
  | 'ERR_WS_SLOW_CONSUMER'
  /** A socket-level failure (including a frame over the payload limit, closed with 1009). */
  | 'ERR_WS_SOCKET';

const messages: Readonly<Record<WebSocketTransportErrorCode, string>> = {
  ERR_WS_INSECURE_URL: 'insecure WebSocket URL (use wss:, or set allowInsecure)',
  ERR_WS_UNAVAILABLE: 'no WebSocket implementation available',
  ERR_WS_ALREADY_STARTED: 'transport already started',
  ERR_WS_CONNECT: 'WebSocket connection failed',
  ERR_WS_NOT_OPEN: 'WebSocket is not open',
  ERR_WS_BINARY_FRAME: 'binary frames are not allowed',
  ERR_WS_PONG_TIMEOUT: 'no pong within the timeout',
  ERR_WS_SLOW_CONSUMER: 'peer is not reading',
  ERR_WS_SOCKET: 'WebSocket error',
};

export class WebSocketTransportError extends TransportError {
  declare readonly code: WebSocketTransportErrorCode;
  constructor(code: WebSocketTransportErrorCode, options?: { cause?: unknown }) {
    super(code, messages[code], options);
    this.name = 'WebSocketTransportError';
  }
}
