// Server side of the WebSocket and HTTP(+SSE) bindings: the `ws` server (Node) and the hono app.
export { createHttpBinding, type HttpBinding, type HttpBindingOptions } from './http-binding.js';
export { HttpSessionTransport } from './http-session.js';
export { SseWriter, type SseWriterEndReason, type SseWriterOptions } from './sse-writer.js';
export {
  type AttachWebSocketServerOptions,
  attachWebSocketServer,
  type UpgradeEmitter,
  type WebSocketAttachment,
} from './ws-attach.js';
export { WebSocketServerTransport, type WebSocketServerTransportOptions } from './ws-server.js';
