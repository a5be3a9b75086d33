import { type ReplayCache, ReplayCacheFullError } from '@wmp/session';
import { ReplayCacheUnavailableError } from '../contracts/errors.js';
import { DEFAULT_REPLAY_MAX_ENTRIES, type ReplayCacheLimits } from '../contracts/replay-cache.js';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { DEFAULT_COUNT_GRANULARITY_MS } from './nonce-cache.js';
import { USE_ONCE } from './scripts.js';

/**
 * Single-use values (DPoP `jti`s) in Redis, shared by every node: `SET NX PXAT` in a Lua script
 * that also bounds the total (no room: `ReplayCacheFullError`, never an eviction). Redis down is
 * `ReplayCacheUnavailableError`, a `ReplayCacheFullError` too: the caller refuses.
 */
export class RedisReplayCache implements ReplayCache {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #maxEntries: string;
  readonly #granularity: string;
  readonly #space: string;

  /** `space` names the cache's keys and its own total (`replay`: DPoP jtis; `status`: peer statuses). */
  constructor(
    link: RedisLink,
    keys: RedisKeys,
    limits: ReplayCacheLimits = {},
    granularityMs = DEFAULT_COUNT_GRANULARITY_MS,
    space = 'replay',
    defaultMaxEntries = DEFAULT_REPLAY_MAX_ENTRIES,
  ) {
    this.#link = link;
    this.#keys = keys;
    this.#space = space;
    this.#maxEntries = String(limits.maxEntries ?? defaultMaxEntries);
    this.#granularity = String(Math.max(1, Math.floor(granularityMs)));
  }

  async useOnce(key: string, expiresAt: number): Promise<boolean> {
    let reply: unknown;
    try {
      reply = await this.#link.script(
        USE_ONCE,
        [this.#keys.replay(key, this.#space), this.#keys.replayTotals(this.#space)],
        [String(Math.ceil(expiresAt)), this.#maxEntries, this.#granularity],
      );
    } catch (error) {
      if (error instanceof RedisFailure && error.kind === 'full') throw new ReplayCacheFullError();
      throw new ReplayCacheUnavailableError({ cause: error });
    }
    if (reply === 1) return true;
    if (reply === 0) return false;
    if (reply === -2) throw new ReplayCacheFullError();
    throw new ReplayCacheUnavailableError({ cause: new Error('unexpected reply') });
  }
}
