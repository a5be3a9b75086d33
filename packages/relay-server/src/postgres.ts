// The PostgreSQL adapters (node-postgres `pg` 8.23, an optional peer dependency), for a relay on
// many nodes (docs/architecture.md, "Cluster"): every store of one node on one database handle,
// written by one batching writer connection. Node only.

export { StoreUnavailableError, type StoreUnavailableReason } from './storage/errors.js';
export { importSqliteDatabase, type SqliteImportReport, type SqliteSource } from './storage/postgres/import-sqlite.js';
export { MIGRATIONS, type Migration, SCHEMA_VERSION } from './storage/postgres/migrations/index.js';
export { migrateBoxSchema, OHAN_BOX_MIGRATIONS } from './storage/postgres/postgres-box-schema.js';
export {
  PostgresBoxStore,
  type PostgresBoxStoreOptions,
} from './storage/postgres/postgres-box-store.js';
export { migrate, PostgresDatabase, type PostgresDatabaseOptions } from './storage/postgres/postgres-database.js';
export { PostgresInventory } from './storage/postgres/postgres-inventory.js';
export { PostgresKeyPackageStore } from './storage/postgres/postgres-key-package-store.js';
export { PostgresMlsGroupStore } from './storage/postgres/postgres-mls-group-store.js';
export { PostgresQueueStore } from './storage/postgres/postgres-queue-store.js';
export { PostgresSessionStore } from './storage/postgres/postgres-session-store.js';
export {
  type PostgresBoxStoreFactory,
  PostgresStore,
  type PostgresStoreOptions,
  postgresBoxStore,
} from './storage/postgres/postgres-store.js';
export { MAX_WRITE_BATCH, PostgresWriter, type WriterStats } from './storage/postgres/postgres-writer.js';
export type { WriterConnectionOptions } from './storage/postgres/write-connection.js';
export { advisoryKey, type LockedRow, type LockKind, type Locks } from './storage/postgres/write-locks.js';
export type { Settled, WriteGroup, WriteOp } from './storage/postgres/write-ops.js';
export { type TxState, type TxStateKey, TxTotals, WriteTx } from './storage/postgres/write-tx.js';
