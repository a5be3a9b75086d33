// The SQLite adapters (better-sqlite3 12, an optional peer dependency): every store in one file,
// written by one group-commit writer. Node only.

export { SqliteBoxStore } from './storage/sqlite/sqlite-box-store.js';
export {
  type DatabaseFileInfo,
  holdLockFile,
  inspectDatabaseFile,
  type OpenDatabaseOptions,
  openDatabase,
} from './storage/sqlite/sqlite-database.js';
export { SqliteInventory } from './storage/sqlite/sqlite-inventory.js';
export { SqliteKeyPackageStore } from './storage/sqlite/sqlite-key-package-store.js';
export { SqliteMlsGroupStore } from './storage/sqlite/sqlite-mls-group-store.js';
export { SqliteQueueStore } from './storage/sqlite/sqlite-queue-store.js';
export { SCHEMA_VERSION } from './storage/sqlite/sqlite-schema.js';
export { SqliteSessionStore } from './storage/sqlite/sqlite-session-store.js';
export { SqliteStore, type SqliteStoreOptions } from './storage/sqlite/sqlite-store.js';
export { WalCheckpointer, type WalCheckpointerStats } from './storage/sqlite/wal-checkpointer.js';
export { type DurableSync, WalFileSync } from './storage/sqlite/wal-sync.js';
export {
  MAX_WRITE_BATCH,
  WriteQueue,
  type WriteQueueOptions,
  type WriteQueueStats,
} from './storage/sqlite/write-queue.js';
