// Browser-safe entry: the storage interfaces, the rules of the OHAN box and the in-memory
// adapters. The SQLite adapters are Node-only and live behind `@wmp/relay-server/node`.

// The OHAN box HTTP API, browser-safe parts (the app is in the Node entry).
export * from './box-api/index.js';
// Coordination between nodes: contracts and memory adapters (Redis: `@wmp/relay-server/redis`).
export * from './coordination/index.js';
export { RelayServerError } from './errors.js';
// The relay's browser-safe parts (createRelay itself is in the Node entry).
export { type RelayConfig, relayStoreLimits } from './relay/config.js';
export { addDuration, type Duration, parseDuration } from './relay/evidence/duration.js';
export {
  DEFAULT_EVIDENCE_RETENTION,
  type EvidenceConfig,
  type EvidenceTimestamper,
  type RelayChainSignatures,
  type ResolvedEvidenceConfig,
} from './relay/evidence/evidence-config.js';
export { RELAY_EVENT_TYPES } from './relay/evidence/evidence-policy.js';
export type { EvidenceAbout, EvidenceExtra, EvidenceRecorder } from './relay/evidence/evidence-witness.js';
// Relay-to-relay routing (docs/federation-profile.md).
export { erdsUnsupported } from './relay/federation/erds.js';
export {
  DEFAULT_FEDERATION_TIMINGS,
  type ErdsSettings,
  type FederationConfig,
  type FederationMode,
  type FederationTimings,
  type PeerEndpoints,
  type PeerTransportFactory,
  parseRoute,
  type StaticRoute,
} from './relay/federation/federation-config.js';
export type { HomeAnswer, HomeResolver, Resolution } from './relay/federation/home-resolver.js';
export { MAX_FEDERATION_HOPS } from './relay/federation/inbound.js';
export { EVIDENCE_PATH, MAX_EVIDENCE_PAGE } from './relay/http/evidence-api.js';
export type { BoxAppInput } from './relay/http/http-app.js';
export { wellKnownConfiguration } from './relay/http/well-known.js';
export { MAX_EPOCH_LAG } from './relay/mls/encrypted-deliver.js';
export type { RelayMlsReason } from './relay/mls/mls-input.js';
export type { RelayAuthContext, RelayAuthenticatorsInput } from './relay/sessions/auth-context.js';
export {
  ASSURANCE_LEVELS,
  type AssuranceLevel,
  DEFAULT_ASSURANCE,
} from './relay/support/assurance.js';
export {
  noEvidenceHooks,
  type RegisteredEvidenceHooks,
  type WitnessedEvent,
  type WitnessedEventType,
} from './relay/support/evidence-hooks.js';
export type { RelayIdentityInput } from './relay/support/identity.js';
export {
  DEFAULT_RELAY_LIMITS,
  DEFAULT_RELAY_TIMINGS,
  type RelayLimits,
  type RelayTimings,
} from './relay/support/limits.js';
export { createJsonLogger, type LogFields, type Logger, type LogLevel, silentLogger } from './relay/support/logger.js';
export { OPS_EVENTS, type OpsEvent, OpsLog } from './relay/support/ops-events.js';
export {
  CONSIGNMENT_MODES,
  type ConsignmentMode,
  type RecipientMetadata,
  type RegisteredDeliveryConfig,
} from './relay/support/registered.js';
export { STORE_RETRY_AFTER_SECONDS, StoreUnavailableRefusal } from './relay/support/store-refusal.js';
export { type BoxEventRecord, boxEventRecord } from './storage/contracts/box-input.js';
export { checkBoxLimits } from './storage/contracts/box-limits.js';
export {
  type AsyncBoxLedger,
  admitEvent,
  admitEventAsync,
  type BoxLedger,
  type BoxTotalsView,
} from './storage/contracts/box-rules.js';
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
} from './storage/contracts/box-store.js';
export {
  DEFAULT_EVIDENCE_LIMITS,
  type EvidenceCase,
  type EvidenceEntry,
  type EvidenceLimits,
  type EvidenceOverview,
  type EvidencePage,
  type EvidenceQuery,
  type EvidenceStore,
} from './storage/contracts/evidence-store.js';
export {
  DEFAULT_KEY_PACKAGE_LIMITS,
  type KeyPackageInput,
  type KeyPackageLimits,
  type KeyPackageStore,
  MAX_KEY_PACKAGE_BYTES,
  type PublishOptions as KeyPackagePublishOptions,
  type StoredKeyPackage,
} from './storage/contracts/key-package-store.js';
export { MAX_IDS_PER_CALL, MAX_PAGE, MAX_SWEEP_BATCH } from './storage/contracts/limits.js';
export {
  type AdvanceResult,
  type CreateGroupResult,
  DEFAULT_MAX_GROUPS,
  type MlsGroupInput,
  type MlsGroupRecord,
  type MlsGroupStore,
} from './storage/contracts/mls-group-store.js';
export {
  type AppendOptions,
  type AppendResult,
  DEFAULT_QUEUE_LIMITS,
  type PartAppendOptions,
  type PartitionedQueueCaps,
  type QueuedMessage,
  type QueueLimits,
  type QueueMessageInput,
  type QueuePage,
  type QueueRemoval,
  type QueueStore,
} from './storage/contracts/queue-store.js';
export type { RelayStoreLimits, RelayStores } from './storage/contracts/relay-stores.js';
export {
  type BoxOverview,
  compareKeys,
  type InventoryPage,
  type QueueOverview,
  type StoreInventory,
} from './storage/contracts/store-inventory.js';
export { purgeBox, purgeQueue } from './storage/contracts/store-purge.js';
export { EMPTY_TOTALS, type Totals } from './storage/contracts/totals.js';
export {
  isStoreUnavailable,
  type QueueFullReason,
  RelayQueueFullError,
  RelayStoreError,
  type RelayStoreErrorCode,
  StoreClosedError,
  StoreInputError,
  StoreLockedError,
  StoreSchemaError,
  StoreUnavailableError,
  type StoreUnavailableReason,
  StoreWriteError,
} from './storage/errors.js';
export { ListedMemorySessionStore } from './storage/memory/listed-memory-session-store.js';
export { MemoryBoxStore } from './storage/memory/memory-box-store.js';
export { MemoryEvidenceStore } from './storage/memory/memory-evidence-store.js';
export { MemoryKeyPackageStore } from './storage/memory/memory-key-package-store.js';
export { MemoryMlsGroupStore } from './storage/memory/memory-mls-group-store.js';
export { MemoryQueueStore } from './storage/memory/memory-queue-store.js';
export { MemoryRelayStores, type MemoryStoreOptions } from './storage/memory/memory-store.js';
