// Node-only entry: the SQLite adapters (better-sqlite3) and their group-commit writer, plus
// everything of the browser-safe entry.
export * from './index.js';
export { SqliteBoxStore } from './sqlite-box-store.js';
export { type OpenDatabaseOptions, openDatabase } from './sqlite-database.js';
export { SqliteQueueStore } from './sqlite-queue-store.js';
export { SCHEMA_VERSION } from './sqlite-schema.js';
export { SqliteSessionStore } from './sqlite-session-store.js';
export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { MAX_WRITE_BATCH, WriteQueue, type WriteQueueOptions, type WriteQueueStats } from './write-queue.js';
