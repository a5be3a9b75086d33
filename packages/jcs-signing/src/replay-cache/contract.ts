/**
 * Who an entry counts against, when the cache bounds shares: the key that signed what is used
 * once, and the source it came from (an address, as the host names it). Neither given: only the
 * total bounds it.
 */
export interface ReplayScope {
  readonly key?: string;
  readonly source?: string;
}

/**
 * The one single-use cache: box request nonces, DPoP `jti`s, statuses passed on from peers. Kept in
 * memory or Redis, never on disk. Check and record are one atomic step, and an unexpired entry is
 * never forgotten (that would let a captured request be used again).
 */
export interface ReplayCache {
  /**
   * Records `value` until `expiresAt` (ms since the epoch) and resolves true (fresh), or resolves
   * false when it is recorded and unexpired (used). A value already expired is fresh and not
   * recorded. Rejects with `ReplayCacheFullError` when there is no room (in all, for
   * `scope.key`, or for `scope.source`), recording nothing, and with `ReplayCacheUnavailableError`
   * (a `ReplayCacheFullError` too) when its backend does not answer.
   */
  useOnce(value: string, expiresAt: number, scope?: ReplayScope): Promise<boolean>;
}

/** The bounds every replay cache adapter takes. */
export interface ReplayCacheLimits {
  /** Unexpired entries held at most, all keys together; default `DEFAULT_REPLAY_MAX_ENTRIES`. */
  readonly maxEntries?: number;
  /** Unexpired entries one `scope.key` may hold; default `maxEntries / 16`. */
  readonly maxPerKey?: number;
  /**
   * Unexpired entries one `scope.source` may hold, all keys together; default `maxEntries / 8` (a
   * source may be many clients behind one address). Throwaway keys from one place fill no more.
   */
  readonly maxPerSource?: number;
}

export const DEFAULT_REPLAY_MAX_ENTRIES = 200_000;

/** `limits` with every default filled in: what an adapter enforces. */
export function replayCacheBounds(limits: ReplayCacheLimits = {}): Required<ReplayCacheLimits> {
  const maxEntries = Math.max(1, Math.floor(limits.maxEntries ?? DEFAULT_REPLAY_MAX_ENTRIES));
  return {
    maxEntries,
    maxPerKey: limits.maxPerKey ?? Math.max(1, Math.floor(maxEntries / 16)),
    maxPerSource: limits.maxPerSource ?? Math.max(1, Math.floor(maxEntries / 8)),
  };
}
