import { RateLimitedError } from '@wmp/jsonrpc-envelope';

/** The budget's window: at most `perTarget` key packages of one identity taken by others in it. */
export const KEY_PACKAGE_FETCH_WINDOW_MS = 3600 * 1000;

/** Most target identities tracked at once; beyond it the oldest window goes first. */
export const MAX_KEY_PACKAGE_BUDGET_TARGETS = 100_000;

interface Window {
  /** When this target's window began (its first counted fetch). */
  readonly start: number;
  used: number;
}

/**
 * How many key packages others may take of one identity (DESIGN §3, §7): a fixed window per
 * *target* identity, all callers together, that begins at its first fetch; kept in memory only.
 * Per caller it would be no budget: fresh identities cost nothing, and four of them took all of a
 * victim's packages. Beyond it the relay hands out the target's last-resort package instead.
 * Taking one's own is free.
 */
export class KeyPackageBudget {
  readonly #perTarget: number;
  readonly #windowMs: number;
  readonly #maxTargets: number;
  readonly #now: () => number;
  /** In order of window start (a new window re-inserts), so the front is the oldest. */
  readonly #windows = new Map<string, Window>();

  constructor(perTarget: number, now: () => number, options: { windowMs?: number; maxTargets?: number } = {}) {
    this.#perTarget = perTarget;
    this.#now = now;
    this.#windowMs = options.windowMs ?? KEY_PACKAGE_FETCH_WINDOW_MS;
    this.#maxTargets = options.maxTargets ?? MAX_KEY_PACKAGE_BUDGET_TARGETS;
  }

  /** Targets tracked now (for tests of the bound). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Reserves one fetch of `target`'s key packages by `caller`, synchronously (so concurrent calls
   * cannot all pass the check before any is counted); over the budget: -31007 with `data.reason`
   * 'key package budget'. The returned function gives the fetch back (call it when nothing was
   * taken: a miss costs the target nothing).
   */
  reserve(caller: string, target: string): () => void {
    if (caller === target) return () => {};
    const now = this.#now();
    let window = this.#windows.get(target);
    if (window !== undefined && now - window.start >= this.#windowMs) {
      this.#windows.delete(target);
      window = undefined;
    }
    if (window === undefined) {
      this.#makeRoom(now);
      window = { start: now, used: 0 };
      this.#windows.set(target, window);
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
      if (reserved.used === 0 && this.#windows.get(target) === reserved) this.#windows.delete(target);
    };
  }

  /** Drops expired windows from the front, then the oldest live one if the map is still full. */
  #makeRoom(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now - window.start < this.#windowMs) break;
      this.#windows.delete(key);
    }
    if (this.#windows.size >= this.#maxTargets) this.#windows.delete(this.#windows.keys().next().value as string);
  }
}
