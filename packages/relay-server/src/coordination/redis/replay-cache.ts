import {
  type ReplayCache,
  ReplayCacheFullError,
  type ReplayCacheLimits,
  ReplayCacheUnavailableError,
  type ReplayScope,
  replayCacheBounds,
} from '@wmp/jcs-signing';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { USE_ONCE } from './scripts.js';

/** Expiry buckets of a cache's total count; an expired entry may be counted this much longer. */
export const DEFAULT_COUNT_GRANULARITY_MS = 1000;

/**
 * Single-use values in Redis, shared by every node (a nonce or a `jti` used on one node is used on
 * all). One Lua script checks and records: the entry is `SET NX PXAT`, a count of all unexpired
 * entries bounds the whole, and a zset per `scope.key` and per `scope.source` bounds each share.
 * An unexpired entry is never dropped: no room is `ReplayCacheFullError`. Redis down or too slow
 * is `ReplayCacheUnavailableError` (a `ReplayCacheFullError` too): the caller fails closed.
 */
export class RedisReplayCache implements ReplayCache {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #space: string;
  readonly #bounds: Required<ReplayCacheLimits>;
  readonly #granularity: string;

  /** `space` names the cache's keys and its own total (`nonce`: box requests; `replay`: DPoP; `status`: peer statuses). */
  constructor(
    link: RedisLink,
    keys: RedisKeys,
    space: string,
    limits: ReplayCacheLimits = {},
    granularityMs = DEFAULT_COUNT_GRANULARITY_MS,
  ) {
    this.#link = link;
    this.#keys = keys;
    this.#space = space;
    this.#bounds = replayCacheBounds(limits);
    this.#granularity = String(Math.max(1, Math.floor(granularityMs)));
  }

  async useOnce(value: string, expiresAt: number, scope: ReplayScope = {}): Promise<boolean> {
    const keys = [this.#keys.replay(value, this.#space), this.#keys.replayTotals(this.#space)];
    const args = [String(Math.ceil(expiresAt)), String(this.#bounds.maxEntries), this.#granularity, value];
    if (scope.key !== undefined) {
      keys.push(this.#keys.replayShare('key', scope.key, this.#space));
      args.push(String(this.#bounds.maxPerKey));
    }
    if (scope.source !== undefined) {
      keys.push(this.#keys.replayShare('src', scope.source, this.#space));
      args.push(String(this.#bounds.maxPerSource));
    }
    let reply: unknown;
    try {
      reply = await this.#link.script(USE_ONCE, keys, args);
    } catch (error) {
      if (error instanceof RedisFailure && error.kind === 'full') throw new ReplayCacheFullError();
      throw new ReplayCacheUnavailableError({ cause: error });
    }
    if (reply === 1) return true;
    if (reply === 0) return false;
    if (reply === -2 || reply === -3) throw new ReplayCacheFullError();
    throw new ReplayCacheUnavailableError({ cause: new Error('unexpected reply') });
  }
}
