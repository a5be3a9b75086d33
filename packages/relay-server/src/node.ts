// Node-only entry: the SQLite adapters (better-sqlite3) and their group-commit writer, plus
// everything of the browser-safe entry.

// The OHAN box HTTP API (ohan.relay.1) as a Hono app, to mount at BOX_API_PREFIX.
export { type BoxApp, createBoxApp } from './box-api/app.js';
export { mountBoxApp } from './box-api/mount.js';
export * from './index.js';
export { createRelayCore, type RelayCore } from './relay/core.js';
// The relay (issue 5): routing, hop and group sessions, offline queue, well-known, health, metrics.
export { createRelay, type Relay } from './relay/create-relay.js';
export { createRelayApp, type RelayAppInput } from './relay/http-app.js';
export { SqliteBoxStore } from './sqlite-box-store.js';
export { type OpenDatabaseOptions, openDatabase } from './sqlite-database.js';
export { SqliteKeyPackageStore } from './sqlite-key-package-store.js';
export { SqliteMlsGroupStore } from './sqlite-mls-group-store.js';
export { SqliteQueueStore } from './sqlite-queue-store.js';
export { SCHEMA_VERSION } from './sqlite-schema.js';
export { SqliteSessionStore } from './sqlite-session-store.js';
export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { MAX_WRITE_BATCH, WriteQueue, type WriteQueueOptions, type WriteQueueStats } from './write-queue.js';
