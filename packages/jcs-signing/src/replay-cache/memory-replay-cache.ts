import { type ReplayCache, type ReplayCacheLimits, type ReplayScope, replayCacheBounds } from './contract.js';
import { ReplayCacheFullError } from './errors.js';
import { ExpiryHeap } from './expiry-heap.js';

interface Entry {
  readonly value: string;
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

export interface MemoryReplayCacheOptions extends ReplayCacheLimits {
  readonly now?: () => number;
}

/**
 * A bounded replay cache in memory, for one process. An unexpired entry is never dropped: with no
 * room it refuses. Each `scope.key` may hold at most `maxPerKey` of it and each `scope.source`
 * `maxPerSource`, so neither one caller nor one place can fill it for everyone. Expired entries
 * leave first thing on every call, by a heap of expiries (whatever order they came in).
 */
export class MemoryReplayCache implements ReplayCache {
  readonly #entries = new Map<string, Entry>();
  readonly #expiries = new ExpiryHeap<Entry>();
  readonly #maxEntries: number;
  readonly #perKey: Shares;
  readonly #perSource: Shares;
  readonly #now: () => number;

  constructor(options: MemoryReplayCacheOptions = {}) {
    const bounds = replayCacheBounds(options);
    this.#maxEntries = bounds.maxEntries;
    this.#perKey = new Shares(bounds.maxPerKey);
    this.#perSource = new Shares(bounds.maxPerSource);
    this.#now = options.now ?? Date.now;
  }

  /** Entries held (some may have expired since the last call). */
  get size(): number {
    return this.#entries.size;
  }

  async useOnce(value: string, expiresAt: number, scope: ReplayScope = {}): Promise<boolean> {
    const now = this.#now();
    this.#sweep(now);
    if (this.#entries.has(value)) return false;
    if (expiresAt <= now) return true; // already expired: nothing to remember
    const { key, source } = scope;
    if (this.#entries.size >= this.#maxEntries || this.#perKey.full(key) || this.#perSource.full(source)) {
      throw new ReplayCacheFullError();
    }
    const entry: Entry = { value, expires: expiresAt, key, source };
    this.#entries.set(value, entry);
    this.#expiries.push(entry);
    this.#perKey.add(key);
    this.#perSource.add(source);
    return true;
  }

  /** Drops every entry that has expired (each leaves once: an entry is never replaced while held). */
  #sweep(now: number): void {
    for (let top = this.#expiries.peek(); top !== undefined && top.expires <= now; top = this.#expiries.peek()) {
      this.#expiries.pop();
      this.#entries.delete(top.value);
      this.#perKey.remove(top.key);
      this.#perSource.remove(top.source);
    }
  }
}
