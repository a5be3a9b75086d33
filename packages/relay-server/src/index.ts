// Browser-safe entry: the storage interfaces, the rules of the OHAN box and the in-memory
// adapters. The SQLite adapters are Node-only and live behind `@wmp/relay-server/node`.

// The OHAN box HTTP API, browser-safe parts (the app is in the Node entry).
export * from './box-api/index.js';
export { type BoxEventRecord, boxEventRecord } from './box-input.js';
export { checkBoxLimits } from './box-limits.js';
export { admitEvent, type BoxLedger } from './box-rules.js';
export {
  type BoxLimits,
  type BoxStore,
  type CardResult,
  DEFAULT_BOX_LIMITS,
  type FetchPage,
  type FetchPageText,
  type Lane,
  type PublishRefusal,
  type PublishResult,
} from './box-store.js';
export { utf8Length } from './bytes.js';
export {
  QueueFullError,
  type QueueFullReason,
  StoreClosedError,
  StoreError,
  type StoreErrorCode,
  StoreInputError,
  StoreSchemaError,
  StoreWriteError,
} from './errors.js';
export {
  DEFAULT_KEY_PACKAGE_LIMITS,
  type KeyPackageInput,
  type KeyPackageLimits,
  type KeyPackageStore,
  MAX_KEY_PACKAGE_BYTES,
  type PublishOptions as KeyPackagePublishOptions,
  type StoredKeyPackage,
} from './key-package-store.js';
export { MAX_IDS_PER_CALL, MAX_PAGE, MAX_SWEEP_BATCH } from './limits.js';
export { MemoryBoxStore } from './memory-box-store.js';
export { MemoryKeyPackageStore } from './memory-key-package-store.js';
export { MemoryMlsGroupStore } from './memory-mls-group-store.js';
export { MemoryQueueStore } from './memory-queue-store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export {
  type AdvanceResult,
  type CreateGroupResult,
  DEFAULT_MAX_GROUPS,
  type MlsGroupInput,
  type MlsGroupRecord,
  type MlsGroupStore,
} from './mls-group-store.js';
export {
  type AppendOptions,
  type AppendResult,
  DEFAULT_QUEUE_LIMITS,
  type QueuedMessage,
  type QueueLimits,
  type QueueMessageInput,
  type QueuePage,
  type QueueRemoval,
  type QueueStore,
} from './queue-store.js';
// The relay's browser-safe parts (createRelay itself is in the Node entry).
export {
  type BoxAppInput,
  DEFAULT_RELAY_LIMITS,
  DEFAULT_RELAY_TIMINGS,
  type RelayConfig,
  type RelayIdentityInput,
  type RelayLimits,
  type RelayTimings,
} from './relay/config.js';
export { MAX_EPOCH_LAG } from './relay/encrypted-deliver.js';
export { createJsonLogger, type LogFields, type Logger, type LogLevel, silentLogger } from './relay/logger.js';
export type { RelayMlsReason } from './relay/mls-input.js';
export { wellKnownConfiguration } from './relay/well-known.js';
export type { RelayStores } from './relay-stores.js';
export { EMPTY_TOTALS, type Totals } from './totals.js';
