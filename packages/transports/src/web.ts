// Browser-safe WebSocket and HTTP(+SSE) bindings: no Node built-ins, only WHATWG APIs.
export { type FetchLike, HttpClientTransport, type HttpClientTransportOptions } from './http-client.js';
export { HttpStatusError, HttpTransportError, type HttpTransportErrorCode } from './http-errors.js';
export { DEFAULT_WMP_PATH, WMP_SESSION_ID_HEADER, WMP_SESSION_TOKEN_HEADER, WMP_SSE_EVENT } from './http-protocol.js';
export { formatSseComment, formatSseEvent, formatSseRetry, type SseOutgoingEvent } from './sse-format.js';
export { type SseEvent, SseParseError, SseParser, type SseParserOptions } from './sse-parser.js';
export { readSseStream } from './sse-reader.js';
export {
  WebSocketClientTransport,
  type WebSocketClientTransportOptions,
  type WebSocketConstructorLike,
  type WebSocketLike,
} from './ws-client.js';
export { WebSocketTransportError, type WebSocketTransportErrorCode } from './ws-errors.js';
export { WMP_SUBPROTOCOL, WsCloseCode } from './ws-protocol.js';
export { isLoopbackHost, toWebSocketUrl } from './ws-url.js';
