// Node-only bindings: stdio, the native messaging host, Unix sockets, the WebSocket server and
// the HTTP binding's session transport. Everything browser-safe is re-exported too.

export { createHttpBinding, type HttpBinding } from './http-binding.js';
export type { HttpBindingOptions, IdOnlyVerdict } from './http-binding-options.js';
export { nodeServerAddress, requestAddress } from './http-request-address.js';
export { type HttpPeerInfo, HttpSessionTransport } from './http-session.js';
export { keyedSessionTokens, randomSessionTokens, type SessionTokens } from './http-session-tokens.js';
export * from './index.js';
export {
  type NativeMessagingCaller,
  NativeMessagingTransport,
  type NativeMessagingTransportOptions,
  nativeMessagingCaller,
} from './native-messaging.js';
export { SseWriter, type SseWriterEndReason, type SseWriterOptions } from './sse-writer.js';
export { StdioTransport, type StdioTransportOptions } from './stdio.js';
export { StreamTransport, StreamTransportError } from './stream-transport.js';
export { tlsPeerCertificates } from './tls-peer.js';
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
} from './unix-socket.js';
export {
  type AttachWebSocketServerOptions,
  attachWebSocketServer,
  type UpgradeEmitter,
  type WebSocketAttachment,
} from './ws-attach.js';
export { WebSocketServerTransport, type WebSocketServerTransportOptions } from './ws-server.js';
