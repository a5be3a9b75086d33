import { RateLimitedError } from '@wmp/jsonrpc-envelope';

interface Bucket {
  tokens: number;
  at: number;
}

/** Most identities tracked at once: the oldest bucket goes first (a full bucket is the default anyway). */
const MAX_BUCKETS = 100_000;

/**
 * One token bucket per identity (kept in memory only: rate windows never go to disk, DESIGN §4.7).
 * `take` throws -31007 when the identity is over its rate.
 */
export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(ratePerSecond: number, burst: number, now: () => number) {
    this.#rate = ratePerSecond;
    this.#burst = burst;
    this.#now = now;
  }

  take(key: string): void {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= MAX_BUCKETS) this.#buckets.delete(this.#buckets.keys().next().value as string);
      bucket = { tokens: this.#burst, at: now };
      this.#buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#rate);
      bucket.at = now;
    }
    if (bucket.tokens < 1) throw new RateLimitedError({ reason: 'request rate' });
    bucket.tokens -= 1;
  }
}
