// Node-only entry: everything of the browser-safe entry, plus what needs Node built-ins: the file
// store, `connect` and a `Mailbox` whose fetch and WebSocket take TLS options (a private CA, a
// client certificate).

export { connect } from './client/connect-node.js';
export * from './index.js';
export { Mailbox } from './mailbox/node-mailbox.js';
export { FileStore } from './store/file-store.js';
export { nodeFetch } from './tls/node-fetch.js';
export { nodeWebSocket } from './tls/node-websocket.js';
