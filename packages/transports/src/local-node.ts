// Node-only local bindings: stdio, the native messaging host, Unix domain sockets.
export {
  type NativeMessagingCaller,
  NativeMessagingTransport,
  type NativeMessagingTransportOptions,
  nativeMessagingCaller,
} from './native-messaging.js';
export { StdioTransport, type StdioTransportOptions } from './stdio.js';
export { StreamTransport, StreamTransportError } from './stream-transport.js';
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
