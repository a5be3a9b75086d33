/** What one frame or request costs beyond its bytes: parsing and dispatch cost something even when small. */
export const READ_COST_PER_FRAME = 512;

export interface SourceReadRateOptions {
  /** Bytes per second one source may have read (its frames' bytes plus `READ_COST_PER_FRAME` each). */
  readonly bytesPerSecond: number;
  /** What a source may read at once before it waits. */
  readonly burstBytes: number;
  /** Sources tracked at once; beyond, the oldest that owes nothing is forgotten. Default 65 536. */
  readonly maxSources?: number;
  /** Milliseconds; injectable for tests. */
  readonly now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Where sources share a bucket when every tracked one is still paying off what it read. */
const OVERFLOW = '\u0000overflow';

/**
 * How fast each source address may be read (docs/architecture.md, "Bounds"): a token bucket per
 * source, charged with what a frame cost after it was read; a source in debt waits until its
 * bucket refills, and its sockets are not read meanwhile (the server pauses them), so a flooding
 * source costs the relay no parsing, no dispatch and no answers beyond its rate, while other
 * sources are served. Pure and synchronous: exact within one process, one per node.
 */
export class SourceReadRate {
  readonly bytesPerSecond: number;
  readonly burstBytes: number;
  readonly #maxSources: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #waits = 0;

  constructor(options: SourceReadRateOptions) {
    const { bytesPerSecond, burstBytes } = options;
    if (!(bytesPerSecond > 0) || !(burstBytes > 0)) throw new RangeError('a read rate must be positive');
    this.bytesPerSecond = bytesPerSecond;
    this.burstBytes = burstBytes;
    this.#maxSources = options.maxSources ?? 65_536;
    this.#now = options.now ?? Date.now;
  }

  /** Times a source had to wait so far (for metrics). */
  get waits(): number {
    return this.#waits;
  }

  /**
   * Charges `bytes` read from `source` (plus the per-frame cost); returns how many milliseconds the
   * source must now wait before it is read again (0: go on).
   */
  charge(source: string, bytes: number): number {
    const now = this.#now();
    const bucket = this.#bucketOf(source, now);
    bucket.tokens -= bytes + READ_COST_PER_FRAME;
    if (bucket.tokens >= 0) return 0;
    this.#waits++;
    return Math.ceil((-bucket.tokens * 1000) / this.bytesPerSecond);
  }

  #bucketOf(source: string, now: number): Bucket {
    let bucket = this.#buckets.get(source);
    if (bucket === undefined) {
      // The overflow bucket is the one entry beyond the bound.
      if (source !== OVERFLOW && this.#buckets.size >= this.#maxSources && !this.#forgetOne(now)) {
        return this.#bucketOf(OVERFLOW, now);
      }
      bucket = { tokens: this.burstBytes, at: now };
      this.#buckets.set(source, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.burstBytes, bucket.tokens + (elapsed * this.bytesPerSecond) / 1000);
    bucket.at = now;
    return bucket;
  }

  /** Forgets the oldest tracked source that owes nothing (forgetting a debtor would forgive it). */
  #forgetOne(now: number): boolean {
    let looked = 0;
    for (const [source, bucket] of this.#buckets) {
      if (source === OVERFLOW) continue;
      const refilled = bucket.tokens + ((now - bucket.at) * this.bytesPerSecond) / 1000;
      if (refilled >= this.burstBytes) {
        this.#buckets.delete(source);
        return true;
      }
      // Bounded work per new source: the oldest are the likeliest to be refilled.
      if (++looked >= 64) return false;
    }
    return false;
  }
}
