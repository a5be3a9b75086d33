// The Redis coordination adapters (@redis/client 6, an optional peer dependency): what the nodes
// of a cluster share that may be lost (docs/architecture.md, "Coordination"). Node only.

export {
  connectRedisCoordination,
  RedisCoordination,
  type RedisCoordinationOptions,
} from './coordination/redis/coordination.js';
export { RedisKeyPackageBudgets } from './coordination/redis/key-package-budgets.js';
export { RedisKeys } from './coordination/redis/keys.js';
export { type LinkOptions as RedisLinkOptions, RedisLink } from './coordination/redis/link.js';
export { RedisPresenceDirectory } from './coordination/redis/presence-directory.js';
export { DEFAULT_COUNT_GRANULARITY_MS, RedisReplayCache } from './coordination/redis/replay-cache.js';
export { RedisTokenBuckets } from './coordination/redis/token-buckets.js';
export { MAX_PENDING_WAKE_UPS, RedisWakeUps } from './coordination/redis/wake-ups.js';
