/** Remembers request nonces for replay detection. Kept in memory (or Redis), never on disk. */
export interface NonceCache {
  /** True if `nonce` was seen within its TTL; otherwise records it for `ttlSeconds` and returns false. */
  seen(nonce: string, ttlSeconds: number): boolean | Promise<boolean>;
}

/**
 * A bounded in-memory nonce cache. Entries expire after their TTL; when full, the oldest entry is
 * dropped first (with a fixed TTL, insertion order is expiry order), so memory stays bounded
 * under a flood of requests.
 */
export class MemoryNonceCache implements NonceCache {
  readonly #entries = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { maxEntries?: number; now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? 200_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  seen(nonce: string, ttlSeconds: number): boolean {
    const now = this.#now();
    const expires = this.#entries.get(nonce);
    if (expires !== undefined && expires > now) return true;
    this.#sweep(now);
    if (expires !== undefined) this.#entries.delete(nonce);
    while (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(nonce, now + ttlSeconds * 1000);
    return false;
  }

  /** Drops expired entries from the front; bounded work per call. */
  #sweep(now: number): void {
    let budget = 64;
    for (const [key, expires] of this.#entries) {
      if (expires > now || budget-- === 0) break;
      this.#entries.delete(key);
    }
  }
}
