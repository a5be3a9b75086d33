/**
 * Remembers request nonces for replay detection. Kept in memory (or Redis), never on disk. A
 * cache never forgets an unexpired nonce (that would let a captured request be replayed): when it
 * is full it refuses with `NonceCacheFullError`, and the box answers 503.
 */
export interface NonceCache {
  /**
   * True if `nonce` was seen within its TTL; otherwise records it for `ttlSeconds` (counted
   * against `key`'s share of the cache, when given) and returns false. Throws
   * `NonceCacheFullError` when there is no room (for this key, or at all): nothing is recorded.
   */
  seen(nonce: string, ttlSeconds: number, key?: string): boolean | Promise<boolean>;
}

/** The nonce cache has no room: the request cannot be checked for replay, so it is refused (503). */
export class NonceCacheFullError extends Error {
  readonly code = 'ERR_NONCE_CACHE_FULL';
  constructor() {
    super('nonce cache full');
    this.name = 'NonceCacheFullError';
  }
}

interface Entry {
  readonly expires: number;
  readonly key: string | undefined;
}

/**
 * A bounded in-memory nonce cache. Entries expire after their TTL (with one TTL, insertion order
 * is expiry order, so expired ones are dropped from the front); an unexpired entry is never
 * dropped. Each key may hold at most `maxPerKey` of it, so one caller cannot fill it for everyone.
 */
export class MemoryNonceCache implements NonceCache {
  readonly #entries = new Map<string, Entry>();
  readonly #perKey = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #maxPerKey: number;
  readonly #now: () => number;

  constructor(options: { maxEntries?: number; maxPerKey?: number; now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? 200_000;
    this.#maxPerKey = options.maxPerKey ?? Math.max(1, Math.floor(this.#maxEntries / 16));
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  seen(nonce: string, ttlSeconds: number, key?: string): boolean {
    const now = this.#now();
    const entry = this.#entries.get(nonce);
    if (entry !== undefined && entry.expires > now) return true;
    this.#sweep(now, this.#entries.size >= this.#maxEntries ? Number.POSITIVE_INFINITY : 64);
    if (entry !== undefined) this.#drop(nonce, entry);
    if (this.#entries.size >= this.#maxEntries) throw new NonceCacheFullError();
    if (key !== undefined && (this.#perKey.get(key) ?? 0) >= this.#maxPerKey) throw new NonceCacheFullError();
    this.#entries.set(nonce, { expires: now + ttlSeconds * 1000, key });
    if (key !== undefined) this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1);
    return false;
  }

  /** Drops expired entries from the front: `budget` of them at most (all of them when full). */
  #sweep(now: number, budget: number): void {
    for (const [nonce, entry] of this.#entries) {
      if (entry.expires > now || budget-- <= 0) break;
      this.#drop(nonce, entry);
    }
  }

  #drop(nonce: string, entry: Entry): void {
    this.#entries.delete(nonce);
    if (entry.key === undefined) return;
    const n = (this.#perKey.get(entry.key) ?? 1) - 1;
    if (n <= 0) this.#perKey.delete(entry.key);
    else this.#perKey.set(entry.key, n);
  }
}
