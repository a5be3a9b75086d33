// Single-use values such as DPoP `jti`s: the contract is @wmp/session's own `ReplayCache`
// (`useOnce(key, expiresAt)`, check and record in one atomic step, `ReplayCacheFullError` rather
// than forget an unexpired entry), so the session layer takes any adapter.
export { MemoryReplayCache, type ReplayCache, ReplayCacheFullError } from '@wmp/session';

/** The bounds every replay cache adapter takes. */
export interface ReplayCacheLimits {
  /** Unexpired entries held at most; default 100,000 (the memory cache's default). */
  readonly maxEntries?: number;
}

export const DEFAULT_REPLAY_MAX_ENTRIES = 100_000;

/** Default bound of the cache of statuses passed on from peers (2 min each: about 4k a second). */
export const DEFAULT_STATUS_CLAIMS_MAX_ENTRIES = 500_000;
