// Node-only bindings (stdio, native messaging host, Unix sockets, WebSocket server).
export * from './index.js';
export * from './local-node.js';
export * from './web-node.js';
