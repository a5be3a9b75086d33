// The PostgreSQL adapters (node-postgres `pg` 8.23, an optional peer dependency), for a relay on
// many nodes (DESIGN §3 "Cluster"): every store of one node on one database handle, written by
// one batching writer connection. Node only.

export { StoreUnavailableError, type StoreUnavailableReason } from './storage/errors.js';
export { MIGRATIONS, type Migration, SCHEMA_VERSION } from './storage/postgres/migrations/index.js';
export { migrateBoxSchema, OHAN_BOX_MIGRATIONS } from './storage/postgres/postgres-box-schema.js';
export {
  PostgresBoxStore,
  type PostgresBoxStoreOptions,
} from './storage/postgres/postgres-box-store.js';
export { migrate, PostgresDatabase, type PostgresDatabaseOptions } from './storage/postgres/postgres-database.js';
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
export {
  advisoryKey,
  type LockedRow,
  type LockKind,
  type Locks,
  MAX_WRITE_BATCH,
  PostgresWriter,
  type Settled,
  type TxState,
  type TxStateKey,
  TxTotals,
  type WriteGroup,
  type WriteOp,
  type WriterStats,
  WriteTx,
} from './storage/postgres/postgres-writer.js';
