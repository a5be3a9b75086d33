// The shared adapter suites (vitest), for authors of a new storage or coordination adapter: every adapter of this
// package passes them, and so must yours. vitest is an optional peer dependency.

export {
  Clusters,
  type CoordinationCluster,
  type CoordinationFactory,
  coordinationSuite,
  holdsFor,
  keyPackageBudgetsSuite,
  presenceDirectorySuite,
  rateLimiterSuite,
  replayCacheSuite,
  until,
  wakeUpsSuite,
} from './coordination/testing/index.js';
export { boxStoreSuite } from './storage/testing/box-store.suite.js';
export { type EvidenceFactory, evidenceStoreSuite } from './storage/testing/evidence-store.suite.js';
export { type Harness, Harnesses } from './storage/testing/harness.js';
export { keyPackageStoreSuite } from './storage/testing/key-package-store.suite.js';
export { mlsGroupStoreSuite } from './storage/testing/mls-group-store.suite.js';
export { queueStoreSuite } from './storage/testing/queue-store.suite.js';
export { sessionStoreSuite } from './storage/testing/session-store.suite.js';
export {
  type InventoryFactory,
  type InventoryStores,
  storeInventorySuite,
} from './storage/testing/store-inventory.suite.js';
