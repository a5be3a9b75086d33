import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';
import { TokenBuckets } from '../memory/token-buckets.js';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { LEASE } from './scripts.js';

/** How long a node may spend a lease (and how long Redis counts it as leased, in two windows). */
export const LEASE_MS = 250;

/** Keys with a lease held at most (the oldest lease goes first: its tokens are forgone, never added). */
const MAX_LEASES = 10_000;

interface Lease {
  /** Tokens left to spend here. */
  tokens: number;
  /** This node's clock: spent no later (taken before the request was sent: Redis counts it longer). */
  readonly until: number;
  /** What was asked beyond the need for it (0: an exact take). */
  readonly size: number;
}

/**
 * Token buckets in Redis, shared by every node: one Lua script (`LEASE`) refills and takes
 * atomically, on the server's clock. A key's take that goes to Redis may ask for more than it
 * needs: the rest is this node's lease, spent locally for `LEASE_MS` (a busy key costs a few
 * round trips a second, not one per take). Redis counts leased tokens as out of the bucket until
 * they may no longer be spent, so the bucket and every node's leases together never hold more
 * than the burst: a lease is a take made early, and a second node gets no more than the bucket
 * holds. A lease grows (doubling, from nothing) while its key spends it all within its life, up
 * to an eighth of the burst and what the rate refills in `LEASE_MS`; a rate that refills less
 * than one token in that time leases nothing (every take is one call). When Redis cannot answer,
 * the node limits with a local bucket of the same options (DESIGN §7: limits degrade to per node,
 * never to none); back to the shared one as soon as Redis answers.
 */
export class RedisTokenBuckets implements RateLimiter {
  readonly #link: RedisLink;
  readonly #keys: RedisKeys;
  readonly #name: string;
  readonly #perMs: string;
  readonly #burst: string;
  readonly #span = String(LEASE_MS);
  readonly #maxLease: number;
  readonly #local: TokenBuckets;
  readonly #leases = new Map<string, Lease>();
  /** Takes answered by the local fallback (for metrics and tests). */
  fallbacks = 0;
  /** Calls to Redis (for tests and the bench). */
  calls = 0;

  constructor(link: RedisLink, keys: RedisKeys, name: string, options: TokenBucketOptions) {
    this.#local = new TokenBuckets(options); // validates the options
    this.#link = link;
    this.#keys = keys;
    this.#name = name;
    this.#perMs = String(options.perSecond / 1000);
    this.#burst = String(options.burst);
    this.#maxLease = Math.floor(Math.min(options.burst / 8, (options.perSecond * LEASE_MS) / 1000));
  }

  async take(key: string, cost = 1): Promise<boolean> {
    if (cost <= 0) return true; // nothing to spend: a bucket never holds less than nothing
    const now = Date.now();
    const lease = this.#leases.get(key);
    const live = lease !== undefined && now < lease.until;
    const held = live ? lease.tokens : 0;
    if (live && held >= cost) {
      lease.tokens -= cost;
      return true;
    }
    if (this.#link.usable) {
      // Claimed by this take while it asks: a take racing it must not count them too.
      if (live) lease.tokens = 0;
      const need = cost - held;
      // Spent within its life: the next lease doubles. Expired with tokens left: exact takes again.
      const size = live
        ? Math.min(this.#maxLease, Math.max(1, lease.size * 2))
        : lease !== undefined && lease.tokens === 0
          ? lease.size
          : 0;
      try {
        this.calls++;
        const granted = Number(
          await this.#link.script(
            LEASE,
            [this.#keys.bucket(this.#name, key)],
            [this.#perMs, this.#burst, String(need), String(need + size), this.#span],
          ),
        );
        if (granted < need) {
          this.#giveBack(key, lease, held); // nothing spent
          return false;
        }
        this.#keep(key, { tokens: granted - need, until: now + LEASE_MS, size });
        return true;
      } catch (error) {
        if (!(error instanceof RedisFailure)) throw error;
        this.#giveBack(key, lease, held);
      }
    }
    this.fallbacks++;
    return this.#local.take(key, cost);
  }

  /** Tokens claimed from `lease` go back to it, while it is still this key's (never into a later lease: they would outlive it). */
  #giveBack(key: string, lease: Lease | undefined, tokens: number): void {
    if (tokens > 0 && lease !== undefined && this.#leases.get(key) === lease) lease.tokens += tokens;
  }

  #keep(key: string, lease: Lease): void {
    this.#leases.delete(key);
    this.#leases.set(key, lease);
    if (this.#leases.size > MAX_LEASES) this.#leases.delete(this.#leases.keys().next().value!);
  }
}
