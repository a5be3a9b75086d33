import { type NonceCache, NonceCacheFullError } from '@wmp/ohan-seal';
import { NonceCacheUnavailableError } from '../contracts/errors.js';
import {
  DEFAULT_NONCE_MAX_ENTRIES,
  type NonceCacheLimits,
  nonceMaxPerKey,
  nonceMaxPerSource,
} from '../contracts/nonce-cache.js';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { NONCE } from './scripts.js';

/** Expiry buckets of the total count; an expired nonce may be counted this much longer. */
export const DEFAULT_COUNT_GRANULARITY_MS = 1000;

/**
 * Nonces of signed box requests in Redis, shared by every node (a request replayed against another
 * node is refused). One Lua script checks and records: a zset per signing key holds its nonces
 * with their expiry (so the key's share is exact and the key expires with its last nonce), and a
 * count of all unexpired nonces bounds the whole, and a zset per source bounds what one place holds.
 * An unexpired nonce is never dropped: no room is
 * `NonceCacheFullError` (503). Redis down or too slow is `NonceCacheUnavailableError`, a
 * `NonceCacheFullError` too: the box fails closed.
 *
 * A nonce is remembered per signing key (a replay carries the key it was signed with); the
 * in-memory cache remembers nonces across keys. Both refuse every replay.
 */
export class RedisNonceCache implements NonceCache {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #maxEntries: string;
  readonly #maxPerKey: string;
  readonly #maxPerSource: string;
  readonly #granularity: string;

  constructor(
    link: RedisLink,
    keys: RedisKeys,
    limits: NonceCacheLimits = {},
    granularityMs = DEFAULT_COUNT_GRANULARITY_MS,
  ) {
    this.#link = link;
    this.#keys = keys;
    this.#maxEntries = String(limits.maxEntries ?? DEFAULT_NONCE_MAX_ENTRIES);
    this.#maxPerKey = String(nonceMaxPerKey(limits));
    this.#maxPerSource = String(nonceMaxPerSource(limits));
    this.#granularity = String(Math.max(1, Math.floor(granularityMs)));
  }

  async seen(nonce: string, ttlSeconds: number, key?: string, source?: string): Promise<boolean> {
    const ttlMs = String(Math.max(1, Math.ceil(ttlSeconds * 1000)));
    // Keyless nonces share one set with no share limit (the total still bounds it).
    const perKey = key === undefined ? '0' : this.#maxPerKey;
    const keys = [this.#keys.nonces(key), this.#keys.nonceTotals()];
    const args = [nonce, ttlMs, perKey, this.#maxEntries, this.#granularity];
    if (source !== undefined) {
      keys.push(this.#keys.nonceSource(source));
      args.push(this.#maxPerSource, `${key ?? ''} ${nonce}`);
    } else args.push('0');
    let reply: unknown;
    try {
      reply = await this.#link.script(NONCE, keys, args);
    } catch (error) {
      if (error instanceof RedisFailure && error.kind === 'full') throw new NonceCacheFullError();
      throw new NonceCacheUnavailableError({ cause: error });
    }
    if (reply === 1) return true;
    if (reply === 0) return false;
    if (reply === -1 || reply === -2 || reply === -3) throw new NonceCacheFullError();
    throw new NonceCacheUnavailableError({ cause: new Error('unexpected reply') });
  }
}
