import { randomBytes } from 'node:crypto';
import {
  DEFAULT_KEY_PACKAGE_BUDGET_NAME,
  KEY_PACKAGE_FETCH_WINDOW_MS,
  type KeyPackageBudgetOptions,
  type KeyPackageBudgets,
  type KeyPackageRefund,
} from '../contracts/key-package-budgets.js';
import { MemoryKeyPackageBudgets } from '../memory/key-package-budgets.js';
import type { RedisKeys } from './keys.js';
import type { RedisLink } from './link.js';
import { REFUND, RESERVE } from './scripts.js';

const free: KeyPackageRefund = async () => {};

/**
 * Key-package budgets in Redis, one window per target shared by every node: reserve and refund
 * are Lua scripts (the check and the count are one step; a refund goes back into the window it
 * came from, by window id, never into a later one). When Redis cannot answer, the node counts in a
 * local window of the same options (a refund of such a reservation goes back there).
 */
export class RedisKeyPackageBudgets implements KeyPackageBudgets {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #name: string;
  readonly #perTarget: string;
  readonly #windowMs: string;
  readonly #local: MemoryKeyPackageBudgets;
  /** Reservations answered by the local fallback. */
  fallbacks = 0;

  constructor(link: RedisLink, keys: RedisKeys, options: KeyPackageBudgetOptions) {
    this.#link = link;
    this.#keys = keys;
    this.#name = options.name ?? DEFAULT_KEY_PACKAGE_BUDGET_NAME;
    this.#perTarget = String(options.perTarget);
    this.#windowMs = String(Math.max(1, Math.ceil(options.windowMs ?? KEY_PACKAGE_FETCH_WINDOW_MS)));
    this.#local = new MemoryKeyPackageBudgets(options);
  }

  async reserve(caller: string, target: string): Promise<KeyPackageRefund | undefined> {
    if (caller === target) return free;
    if (this.#link.usable) {
      const key = this.#keys.budget(this.#name, target);
      try {
        const id = await this.#link.script(RESERVE, [key], [this.#perTarget, this.#windowMs, freshId()]);
        if (typeof id !== 'string') return undefined;
        return this.#refund(key, id);
      } catch {
        // falls back below
      }
    }
    this.fallbacks++;
    return this.#local.reserveNow(caller, target);
  }

  #refund(key: string, id: string): KeyPackageRefund {
    let refunded = false;
    return async () => {
      if (refunded) return;
      refunded = true;
      try {
        await this.#link.script(REFUND, [key], [id]);
      } catch {
        // Redis is down: the reservation stays counted until its window ends (errs towards the target).
      }
    };
  }
}

function freshId(): string {
  return randomBytes(12).toString('base64url');
}
