/**
 * Remembers request nonces for replay detection. Kept in memory (or Redis), never on disk. A
 * cache never forgets an unexpired nonce (that would let a captured request be replayed): when it
 * is full it refuses with `NonceCacheFullError`, and the box answers 503.
 */
export interface NonceCache {
  /**
   * True if `nonce` was seen within its TTL; otherwise records it for `ttlSeconds` (counted
   * against `key`'s share of the cache and `source`'s, when given: the request's signer and where
   * it came from) and returns false. Throws `NonceCacheFullError` when there is no room (for this
   * key, this source, or at all): nothing is recorded.
   */
  seen(nonce: string, ttlSeconds: number, key?: string, source?: string): boolean | Promise<boolean>;
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
  readonly source: string | undefined;
}

/** Counts of unexpired entries by owner (a key, or a source), dropped at zero. */
class Shares {
  readonly #counts = new Map<string, number>();
  constructor(readonly max: number) {}
  full(owner: string | undefined): boolean {
    return owner !== undefined && (this.#counts.get(owner) ?? 0) >= this.max;
  }
  add(owner: string | undefined): void {
    if (owner !== undefined) this.#counts.set(owner, (this.#counts.get(owner) ?? 0) + 1);
  }
  remove(owner: string | undefined): void {
    if (owner === undefined) return;
    const n = (this.#counts.get(owner) ?? 1) - 1;
    if (n <= 0) this.#counts.delete(owner);
    else this.#counts.set(owner, n);
  }
}

export interface MemoryNonceCacheOptions {
  /** Unexpired nonces held at most; default 200,000. */
  readonly maxEntries?: number;
  /** Unexpired nonces of one key; default `maxEntries / 16`. */
  readonly maxPerKey?: number;
  /** Unexpired nonces from one source; default `maxEntries / 8` (a source may be many clients). */
  readonly maxPerSource?: number;
  readonly now?: () => number;
}

/**
 * A bounded in-memory nonce cache. Entries expire after their TTL (with one TTL, insertion order
 * is expiry order, so expired ones are dropped from the front); an unexpired entry is never
 * dropped. Each key may hold at most `maxPerKey` of it and each source `maxPerSource`, so neither
 * one caller nor one place can fill it for everyone.
 */
export class MemoryNonceCache implements NonceCache {
  readonly #entries = new Map<string, Entry>();
  readonly #perKey: Shares;
  readonly #perSource: Shares;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryNonceCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 200_000;
    this.#perKey = new Shares(options.maxPerKey ?? Math.max(1, Math.floor(this.#maxEntries / 16)));
    this.#perSource = new Shares(options.maxPerSource ?? Math.max(1, Math.floor(this.#maxEntries / 8)));
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  seen(nonce: string, ttlSeconds: number, key?: string, source?: string): boolean {
    const now = this.#now();
    const entry = this.#entries.get(nonce);
    if (entry !== undefined && entry.expires > now) return true;
    this.#sweep(now, this.#entries.size >= this.#maxEntries ? Number.POSITIVE_INFINITY : 64);
    if (entry !== undefined) this.#drop(nonce, entry);
    if (this.#entries.size >= this.#maxEntries || this.#perKey.full(key) || this.#perSource.full(source)) {
      throw new NonceCacheFullError();
    }
    this.#entries.set(nonce, { expires: now + ttlSeconds * 1000, key, source });
    this.#perKey.add(key);
    this.#perSource.add(source);
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
    this.#perKey.remove(entry.key);
    this.#perSource.remove(entry.source);
  }
}
