// Node-only entry: everything of the browser-safe entry, plus what needs Node built-ins.

export { connect } from './client/connect-node.js';
export * from './index.js';
export { FileStore } from './store/file-store.js';
