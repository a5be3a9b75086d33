import { RateLimitedError } from '@wmp/jsonrpc-envelope';

/** The budget's window: at most `perTarget` key packages of one identity per caller in it. */
export const KEY_PACKAGE_FETCH_WINDOW_MS = 3600 * 1000;

/** Most (caller, target) pairs tracked at once; beyond it the oldest window goes first. */
export const MAX_KEY_PACKAGE_BUDGET_PAIRS = 100_000;

interface Window {
  /** When this pair's window began (its first counted fetch). */
  readonly start: number;
  used: number;
}

/**
 * How many key packages one caller may take of another identity (DESIGN §3): a fixed window per
 * (caller, target) pair that begins at the pair's first fetch, kept in memory only (rate windows
 * never go to disk, DESIGN §4.7). Without it one caller could drain anyone's key packages, and
 * every later add of that identity fails until it publishes again. Taking one's own is free.
 */
export class KeyPackageBudget {
  readonly #perTarget: number;
  readonly #windowMs: number;
  readonly #maxPairs: number;
  readonly #now: () => number;
  /** In order of window start (a new window re-inserts), so the front is the oldest. */
  readonly #windows = new Map<string, Window>();

  constructor(perTarget: number, now: () => number, options: { windowMs?: number; maxPairs?: number } = {}) {
    this.#perTarget = perTarget;
    this.#now = now;
    this.#windowMs = options.windowMs ?? KEY_PACKAGE_FETCH_WINDOW_MS;
    this.#maxPairs = options.maxPairs ?? MAX_KEY_PACKAGE_BUDGET_PAIRS;
  }

  /** Pairs tracked now (for tests of the bound). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Reserves one fetch of `target`'s key packages for `caller`, synchronously (so concurrent
   * calls cannot all pass the check before any is counted); over the budget: -31007 with
   * `data.reason` 'key package budget'. The returned function gives the fetch back (call it
   * when nothing was taken: a miss costs the target nothing, so it costs the caller nothing).
   */
  reserve(caller: string, target: string): () => void {
    if (caller === target) return () => {};
    const key = `${caller}\n${target}`;
    const now = this.#now();
    let window = this.#windows.get(key);
    if (window !== undefined && now - window.start >= this.#windowMs) {
      this.#windows.delete(key);
      window = undefined;
    }
    if (window === undefined) {
      this.#makeRoom(now);
      window = { start: now, used: 0 };
      this.#windows.set(key, window);
    }
    if (window.used >= this.#perTarget) throw new RateLimitedError({ reason: 'key package budget' });
    window.used += 1;
    const reserved = window;
    let refunded = false;
    return () => {
      if (refunded) return;
      refunded = true;
      reserved.used -= 1;
      // An empty window is the default anyway: do not let misses fill the map.
      if (reserved.used === 0 && this.#windows.get(key) === reserved) this.#windows.delete(key);
    };
  }

  /** Drops expired windows from the front, then the oldest live one if the map is still full. */
  #makeRoom(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now - window.start < this.#windowMs) break;
      this.#windows.delete(key);
    }
    if (this.#windows.size >= this.#maxPairs) this.#windows.delete(this.#windows.keys().next().value as string);
  }
}
