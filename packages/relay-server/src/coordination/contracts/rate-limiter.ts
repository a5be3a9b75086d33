/**
 * Token buckets by key (docs/architecture.md, "Storage": ephemeral state, in memory or Redis, never
 * on disk): `take` spends `cost` tokens of `key` and says whether it could. A refused take spends
 * nothing. An adapter may answer synchronously (memory) or not (Redis); callers await only a
 * promise.
 */
export interface RateLimiter {
  take(key: string, cost?: number): boolean | Promise<boolean>;
}

export interface TokenBucketOptions {
  /** Tokens added per second. */
  readonly perSecond: number;
  /** Bucket size: what a key may spend at once. */
  readonly burst: number;
  /** Most keys tracked (memory adapter). */
  readonly maxKeys?: number;
  /** The clock (memory adapter; the Redis adapter uses the server's clock, one for all nodes). */
  readonly now?: () => number;
}
