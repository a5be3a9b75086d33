import { BoundedMap } from '@wmp/jsonrpc-envelope';
import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';

interface Bucket {
  tokens: number;
  at: number;
}

/** Most keys tracked by default. */
const DEFAULT_MAX_KEYS = 100_000;

/**
 * Token buckets in memory (one process). A Map in least recently used order bounds memory; when it
 * is full, a bucket that has refilled (the default state anyway) goes first, and only if none
 * has, the least recently used one: a flood of fresh keys cannot reset the buckets that matter
 * unless it outnumbers `maxKeys` in one refill period.
 */
export class TokenBuckets implements RateLimiter {
  readonly #buckets: BoundedMap<string, Bucket>;
  readonly #perMs: number;
  readonly #burst: number;
  readonly #now: () => number;

  constructor(options: TokenBucketOptions) {
    if (!(options.perSecond > 0) || !(options.burst >= 1))
      throw new RangeError('token buckets need perSecond > 0, burst >= 1');
    this.#perMs = options.perSecond / 1000;
    this.#burst = options.burst;
    this.#buckets = new BoundedMap(options.maxKeys ?? DEFAULT_MAX_KEYS);
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#buckets.size;
  }

  take(key: string, cost = 1): boolean {
    const now = this.#now();
    const bucket = this.#buckets.get(key);
    let tokens = this.#burst;
    if (bucket !== undefined) {
      tokens = Math.min(this.#burst, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs);
      this.#buckets.delete(key);
    } else if (this.#buckets.size >= this.#buckets.maxSize) {
      this.#forgetRefilled(now);
    }
    const allowed = tokens >= cost;
    this.#buckets.set(key, { tokens: allowed ? tokens - cost : tokens, at: now });
    this.#pruneFront(now);
    return allowed;
  }

  /**
   * Forgets up to two refilled buckets at the front (the least recently used): a refilled bucket is
   * what a missing one starts as, so nothing changes but the memory of keys gone quiet (an idle
   * connection's buckets, say). Two per take outpace the one a take can add.
   */
  #pruneFront(now: number): void {
    for (let i = 0; i < 2; i++) {
      const first = this.#buckets.keys().next();
      if (first.done) return;
      const b = this.#buckets.get(first.value);
      if (b === undefined || b.tokens + (now - b.at) * this.#perMs < this.#burst) return;
      this.#buckets.delete(first.value);
    }
  }

  /** Forgets a refilled bucket near the front if there is one; else setting drops the least recently used. */
  #forgetRefilled(now: number): void {
    // The front is the least recently used; a few full ones there cost nothing to forget.
    let scanned = 0;
    for (const [key, b] of this.#buckets) {
      if (b.tokens + (now - b.at) * this.#perMs >= this.#burst) {
        this.#buckets.delete(key);
        return;
      }
      if (++scanned >= 32) break;
    }
  }
}
