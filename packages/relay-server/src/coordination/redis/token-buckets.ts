import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';
import { TokenBuckets } from '../memory/token-buckets.js';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { TAKE } from './scripts.js';

/**
 * Token buckets in Redis, shared by every node: one Lua script refills and takes atomically, on
 * the server's clock; a bucket's key expires when it would be full again. When Redis cannot
 * answer, the node limits with a local bucket of the same options (docs/architecture.md,
 * "Coordination": limits degrade to per node, never to none); back to the shared one as soon as
 * Redis answers.
 */
export class RedisTokenBuckets implements RateLimiter {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #name: string;
  readonly #perMs: string;
  readonly #burst: string;
  readonly #local: TokenBuckets;
  /** Takes answered by the local fallback (for metrics and tests). */
  fallbacks = 0;

  constructor(link: RedisLink, keys: RedisKeys, name: string, options: TokenBucketOptions) {
    this.#local = new TokenBuckets(options); // validates the options
    this.#link = link;
    this.#keys = keys;
    this.#name = name;
    this.#perMs = String(options.perSecond / 1000);
    this.#burst = String(options.burst);
  }

  async take(key: string, cost = 1): Promise<boolean> {
    if (this.#link.usable) {
      try {
        const reply = await this.#link.script(
          TAKE,
          [this.#keys.bucket(this.#name, key)],
          [this.#perMs, this.#burst, String(cost)],
        );
        return reply === 1;
      } catch (error) {
        if (!(error instanceof RedisFailure)) throw error;
      }
    }
    this.fallbacks++;
    return this.#local.take(key, cost);
  }
}
