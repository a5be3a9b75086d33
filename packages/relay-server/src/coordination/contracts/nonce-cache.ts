// Request nonces of signed box requests (DESIGN §7): the contract is ohan-seal's own, so that
// `verifyRequest` takes any adapter. Check and record are one atomic step; an unexpired nonce is
// never forgotten; no room (for the key, the source, or at all) is `NonceCacheFullError` with nothing
// recorded.
export { MemoryNonceCache, type NonceCache, NonceCacheFullError } from '@wmp/ohan-seal';

/** The bounds every nonce cache adapter takes (the memory cache's own defaults). */
export interface NonceCacheLimits {
  /** Unexpired nonces held at most, all keys together; default 200,000. */
  readonly maxEntries?: number;
  /** Unexpired nonces one key may hold; default `maxEntries / 16`. */
  readonly maxPerKey?: number;
  /**
   * Unexpired nonces of requests from one source (an address, as the box's host names it) may
   * hold, all keys together; default `maxEntries / 8` (a source may be many clients behind one
   * address). Throwaway keys from one place fill no more than this.
   */
  readonly maxPerSource?: number;
}

export const DEFAULT_NONCE_MAX_ENTRIES = 200_000;

export function nonceMaxPerKey(limits: NonceCacheLimits): number {
  return limits.maxPerKey ?? Math.max(1, Math.floor((limits.maxEntries ?? DEFAULT_NONCE_MAX_ENTRIES) / 16));
}

export function nonceMaxPerSource(limits: NonceCacheLimits): number {
  return limits.maxPerSource ?? Math.max(1, Math.floor((limits.maxEntries ?? DEFAULT_NONCE_MAX_ENTRIES) / 8));
}
