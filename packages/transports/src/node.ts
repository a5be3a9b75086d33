// Node-only bindings: stdio, the native messaging host, Unix sockets, the WebSocket server and
// the HTTP binding's session transport. Everything browser-safe is re-exported too.

export { createHttpBinding, type HttpBinding } from './http/http-binding.js';
export type { HttpBindingOptions, IdOnlyVerdict } from './http/http-binding-options.js';
export { gateByReadRate, type HttpReadGateOptions } from './http/http-read-gate.js';
export { nodeServerAddress, requestAddress } from './http/http-request-address.js';
export { type HttpPeerInfo, HttpSessionTransport } from './http/http-session.js';
export { keyedSessionTokens, randomSessionTokens, type SessionTokens } from './http/http-session-tokens.js';
export { SseWriter, type SseWriterEndReason, type SseWriterOptions } from './http/sse-writer.js';
export * from './index.js';
export {
  type NativeMessagingCaller,
  NativeMessagingTransport,
  type NativeMessagingTransportOptions,
  nativeMessagingCaller,
} from './stream/native-messaging.js';
export { StdioTransport, type StdioTransportOptions } from './stream/stdio.js';
export { StreamTransport, StreamTransportError } from './stream/stream-transport.js';
export {
  connectUnixSocket,
  DEFAULT_MAX_UNIX_CONNECTIONS,
  defaultSocketPath,
  ensurePrivateDirectory,
  listenUnixSocket,
  type SocketPathEnvironment,
  UnixSocketError,
  type UnixSocketErrorCode,
  UnixSocketServer,
  type UnixSocketServerOptions,
  UnixSocketTransport,
  type UnixSocketTransportOptions,
} from './stream/unix-socket.js';
export { tlsPeerCertificates } from './tls-peer.js';
export {
  type AttachWebSocketServerOptions,
  attachWebSocketServer,
  type UpgradeEmitter,
  type WebSocketAttachment,
} from './ws/ws-attach.js';
export { WebSocketServerTransport, type WebSocketServerTransportOptions } from './ws/ws-server.js';
