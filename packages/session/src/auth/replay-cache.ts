/**
 * Single-use values (DPoP `jti`s, and any other nonce a responder must see only once). One atomic
 * operation, async so that SQLite and Redis adapters fit the same interface.
 */
export interface ReplayCache {
  /**
   * Records `key` until `expiresAt` (ms since the epoch) and resolves true, or resolves false when
   * it is already recorded and unexpired. Check and record are one atomic step. Rejects with
   * `ReplayCacheFullError` rather than forget an unexpired entry, and with
   * `ReplayCacheUnavailableError` when its backend does not answer.
   */
  useOnce(key: string, expiresAt: number): Promise<boolean>;
}

/** A replay cache that cannot take another entry without forgetting an unexpired one. */
export class ReplayCacheFullError extends Error {
  readonly code = 'ERR_REPLAY_CACHE_FULL';
  constructor() {
    super('replay cache full');
    this.name = 'ReplayCacheFullError';
  }
}

/**
 * A replay cache that cannot check a key because its backend (Redis) does not answer. A
 * `ReplayCacheFullError` on purpose: a caller that refuses when the cache is full refuses during
 * an outage with no change; DPoP tells the two apart (`replayCacheRefusalReason`).
 */
export class ReplayCacheUnavailableError extends ReplayCacheFullError {
  constructor(options?: { cause?: unknown }) {
    super();
    this.message = 'replay cache unavailable';
    this.name = 'ReplayCacheUnavailableError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The -31007 `data.reason` of a replay cache's refusal: no room without forgetting a live entry, or no answer. */
export type ReplayCacheRefusalReason = 'replay_cache_full' | 'replay_cache_unavailable';

/** The refusal reason for an error a `ReplayCache` rejected with; undefined for any other error. */
export function replayCacheRefusalReason(error: unknown): ReplayCacheRefusalReason | undefined {
  if (error instanceof ReplayCacheUnavailableError) return 'replay_cache_unavailable';
  if (error instanceof ReplayCacheFullError) return 'replay_cache_full';
  return undefined;
}

export interface MemoryReplayCacheOptions {
  /** Entries held at most, default 100,000. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/**
 * In memory, for one process: bounded, and it never evicts an unexpired entry (DESIGN §7: when full
 * it refuses). Expired entries are swept when the cache is full, at most once per earliest expiry.
 */
export class MemoryReplayCache implements ReplayCache {
  readonly #entries = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;
  /** No entry expires before this: a sweep earlier would find nothing. */
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(options: MemoryReplayCacheOptions = {}) {
    this.#max = Math.max(1, options.maxEntries ?? 100_000);
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  async useOnce(key: string, expiresAt: number): Promise<boolean> {
    const now = this.#now();
    const seen = this.#entries.get(key);
    if (seen !== undefined && seen > now) return false;
    if (expiresAt <= now) return true; // already expired: nothing to remember
    const until = expiresAt;
    if (seen === undefined && this.#entries.size >= this.#max) {
      this.#sweep(now);
      if (this.#entries.size >= this.#max) throw new ReplayCacheFullError();
    }
    this.#entries.set(key, until);
    if (until < this.#nextExpiry) this.#nextExpiry = until;
    return true;
  }

  #sweep(now: number): void {
    if (now < this.#nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, until] of this.#entries) {
      if (until <= now) this.#entries.delete(key);
      else if (until < next) next = until;
    }
    this.#nextExpiry = next;
  }
}
