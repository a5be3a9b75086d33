export { abortableSleep } from './abortable-sleep.js';
// Browser-safe bindings and framing: WHATWG APIs only (fetch, WebSocket, streams).

export { ByteBudget } from './byte-budget.js';
export { clientAddress, plainAddress, trustedProxySet } from './client-address.js';
export { TransportError } from './errors.js';
export {
  FrameTooLargeError,
  FramingError,
  InvalidUtf8Error,
  LineTooLongError,
  TruncatedFrameError,
} from './framing/errors.js';
export { DEFAULT_MAX_FRAME_BYTES, type FrameReader } from './framing/frame-reader.js';
export {
  type Endianness,
  encodeLengthPrefixed,
  type LengthPrefixedOptions,
  LengthPrefixedReadBuffer,
  nativeEndianness,
} from './framing/length-prefixed.js';
export { NdjsonReadBuffer, type NdjsonReadBufferOptions, serializeNdjson } from './framing/ndjson.js';
export { type BodyRead, type BodyReadOptions, readBody, readBoundedBody } from './http/http-body.js';
export { type FetchLike, HttpClientTransport, type HttpClientTransportOptions } from './http/http-client.js';
export { HttpStatusError, HttpTransportError, type HttpTransportErrorCode } from './http/http-errors.js';
export {
  DEFAULT_WMP_PATH,
  WMP_SESSION_ID_HEADER,
  WMP_SESSION_TOKEN_HEADER,
  WMP_SSE_EVENT,
} from './http/http-protocol.js';
export { formatSseComment, formatSseEvent, formatSseRetry, type SseOutgoingEvent } from './http/sse-format.js';
export { type SseEvent, SseParseError, SseParser, type SseParserOptions } from './http/sse-parser.js';
export { readSseStream } from './http/sse-reader.js';
export { READ_COST_PER_FRAME, SourceReadRate, type SourceReadRateOptions } from './read-rate.js';
export {
  type ReconnectAttempt,
  ReconnectFailedError,
  type ReconnectOptions,
  ReconnectPolicy,
  type ReconnectPolicyOptions,
  reconnect,
} from './reconnect.js';
export {
  WebSocketClientTransport,
  type WebSocketClientTransportOptions,
  type WebSocketConstructorLike,
  type WebSocketLike,
} from './ws/ws-client.js';
export { WebSocketTransportError, type WebSocketTransportErrorCode } from './ws/ws-errors.js';
export { WMP_SUBPROTOCOL, WsCloseCode } from './ws/ws-protocol.js';
export { toWebSocketUrl } from './ws/ws-url.js';
