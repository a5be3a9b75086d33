/**
 * Token buckets per key, in memory only (rate windows are never stored). A Map in least recently
 * used order bounds memory: past `maxKeys` the stalest key is forgotten, which at worst gives that
 * key a fresh bucket: the limiter fails open for one key rather than growing without bound.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #perMs: number;
  readonly #burst: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(options: { perSecond: number; burst: number; maxKeys: number; now: () => number }) {
    this.#perMs = options.perSecond / 1000;
    this.#burst = options.burst;
    this.#maxKeys = options.maxKeys;
    this.#now = options.now;
  }

  get size(): number {
    return this.#buckets.size;
  }

  /** Spends one token of `key`; false when its bucket is empty (answer `rate_limited`). */
  take(key: string): boolean {
    const now = this.#now();
    const bucket = this.#buckets.get(key);
    let tokens = this.#burst;
    if (bucket !== undefined) {
      tokens = Math.min(this.#burst, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs);
      this.#buckets.delete(key);
    } else if (this.#buckets.size >= this.#maxKeys) {
      this.#buckets.delete(this.#buckets.keys().next().value as string);
    }
    const allowed = tokens >= 1;
    this.#buckets.set(key, { tokens: allowed ? tokens - 1 : tokens, at: now });
    return allowed;
  }
}
