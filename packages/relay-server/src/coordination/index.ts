// The coordination layer's browser-safe parts: the contracts, their errors and the memory
// adapters. The Redis adapters are behind `@wmp/relay-server/redis`.

export {
  DEFAULT_REPLAY_MAX_ENTRIES,
  MemoryReplayCache,
  type ReplayCache,
  ReplayCacheFullError,
  type ReplayCacheLimits,
  type ReplayScope,
} from '@wmp/jcs-signing';
export type {
  Coordination,
  CoordinationHealth,
  CoordinationLimits,
} from './contracts/coordination.js';
export {
  CoordinationUnavailableError,
  isCoordinationUnavailable,
  NonceCacheUnavailableError,
  ReplayCacheUnavailableError,
} from './contracts/errors.js';
export {
  DEFAULT_KEY_PACKAGE_BUDGET_NAME,
  KEY_PACKAGE_FETCH_WINDOW_MS,
  type KeyPackageBudgetOptions,
  type KeyPackageBudgets,
  type KeyPackageRefund,
} from './contracts/key-package-budgets.js';
export type { PresenceDirectory } from './contracts/presence-directory.js';
export type { RateLimiter, TokenBucketOptions } from './contracts/rate-limiter.js';
export {
  DEFAULT_WAKE_UP_LIMITS,
  type WakeHandler,
  type WakeUnsubscribe,
  type WakeUpLimits,
  type WakeUps,
} from './contracts/wake-ups.js';
export {
  MemoryCoordinationHub,
  type MemoryCoordinationOptions,
  memoryCoordination,
} from './memory/coordination.js';
export { MAX_KEY_PACKAGE_BUDGET_TARGETS, MemoryKeyPackageBudgets } from './memory/key-package-budgets.js';
export { MemoryPresenceDirectory } from './memory/presence-directory.js';
export { TokenBuckets } from './memory/token-buckets.js';
export { MemoryWakeBus, MemoryWakeUps } from './memory/wake-ups.js';
