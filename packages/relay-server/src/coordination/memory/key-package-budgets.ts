import { BoundedMap } from '@wmp/jsonrpc-envelope';
import {
  KEY_PACKAGE_FETCH_WINDOW_MS,
  type KeyPackageBudgetOptions,
  type KeyPackageBudgets,
  type KeyPackageRefund,
} from '../contracts/key-package-budgets.js';

/** Most target identities tracked at once by default; beyond it the oldest window goes first. */
export const MAX_KEY_PACKAGE_BUDGET_TARGETS = 100_000;

interface Window {
  /** When this target's window began (its first counted fetch). */
  readonly start: number;
  used: number;
}

const free: KeyPackageRefund = async () => {};

/**
 * Key-package budgets in memory (one process; the behaviour of `relay/key-package-budget.ts`,
 * behind the async contract). A Map in order of window start bounds memory.
 */
export class MemoryKeyPackageBudgets implements KeyPackageBudgets {
  readonly #perTarget: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  /** In order of window start (a new window re-inserts), so the front is the oldest. */
  readonly #windows: BoundedMap<string, Window>;

  constructor(options: KeyPackageBudgetOptions) {
    this.#perTarget = options.perTarget;
    this.#windowMs = options.windowMs ?? KEY_PACKAGE_FETCH_WINDOW_MS;
    this.#windows = new BoundedMap(options.maxTargets ?? MAX_KEY_PACKAGE_BUDGET_TARGETS);
    this.#now = options.now ?? Date.now;
  }

  /** Targets tracked now (for tests of the bound). */
  get size(): number {
    return this.#windows.size;
  }

  async reserve(caller: string, target: string): Promise<KeyPackageRefund | undefined> {
    return this.reserveNow(caller, target);
  }

  /** `reserve`, synchronously (for the Redis adapter's local fallback and for one-process callers). */
  reserveNow(caller: string, target: string): KeyPackageRefund | undefined {
    if (caller === target) return free;
    const now = this.#now();
    let window = this.#windows.get(target);
    if (window !== undefined && now - window.start >= this.#windowMs) {
      this.#windows.delete(target);
      window = undefined;
    }
    if (window === undefined) {
      if (this.#perTarget < 1) return undefined;
      this.#dropExpired(now);
      window = { start: now, used: 0 };
      this.#windows.set(target, window);
    }
    if (window.used >= this.#perTarget) return undefined;
    window.used += 1;
    const reserved = window;
    let refunded = false;
    return async () => {
      if (refunded) return;
      refunded = true;
      reserved.used -= 1;
      // An empty window is the default anyway: do not let misses fill the map.
      if (reserved.used === 0 && this.#windows.get(target) === reserved) this.#windows.delete(target);
    };
  }

  /** Drops expired windows from the front; if the map is still full, setting drops the oldest live one. */
  #dropExpired(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now - window.start < this.#windowMs) break;
      this.#windows.delete(key);
    }
  }
}
