import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';
import { TokenBuckets } from '../memory/token-buckets.js';
import type { RedisKeys } from './keys.js';
import { RedisFailure, type RedisLink } from './link.js';
import { LEASE } from './scripts.js';

/** How long a node may spend a lease (and how long Redis counts it as leased, in two windows). */
export const LEASE_MS = 250;

/** Keys with a lease held at most (the oldest lease goes first: its tokens are forgone, never added). */
const MAX_LEASES = 10_000;

/** Calls of its key a take waits for before it makes its own (a burst larger than the leases). */
const MAX_WAITS = 4;

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
 * than one token in that time leases nothing (every take is one call); one that expires with
 * tokens left is forgone and halves. A take its lease does not cover waits for a call of its key
 * already on its way (at most `MAX_WAITS` in a row, and only for a cost a lease could cover; then
 * it asks for its need alone), so a burst of one key's takes costs a few calls, not one each; a
 * take Redis refuses still spends a lease that landed meanwhile. When Redis cannot answer,
 * the node limits with a local bucket of the same options (docs/architecture.md,
 * "Coordination": limits degrade to per node, never to none); back to the shared one as soon as Redis answers.
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
  /** A call for the key on its way (settles with it). */
  readonly #pending = new Map<string, Promise<void>>();
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
    // Takes of one key come in bursts (a sender's requests in flight): while a call for the key
    // is on its way, wait for its lease instead of making another (unless no lease could cover
    // this cost: then waiting only delays it).
    const waits = cost <= this.#maxLease ? MAX_WAITS : 0;
    for (let waited = 0; waited < waits; waited++) {
      if (this.#spend(key, cost)) return true;
      const pending = this.#pending.get(key);
      if (pending === undefined) break;
      await pending;
    }
    if (this.#spend(key, cost)) return true;
    if (this.#link.usable) {
      // Only a key's one call on its way asks for a lease (the takes waiting spend it); a take
      // that waited enough asks for its need alone: a lease beside it would find no take left.
      const leasing = !this.#pending.has(key);
      const call = this.#call(key, cost, leasing);
      const settled = call.then(
        () => undefined,
        () => undefined,
      );
      if (leasing) this.#pending.set(key, settled);
      try {
        const answer = await call;
        if (answer !== undefined) return answer;
      } finally {
        if (this.#pending.get(key) === settled) this.#pending.delete(key);
      }
    }
    this.fallbacks++;
    return this.#local.take(key, cost);
  }

  /** Spends `cost` from the key's live lease, when it holds that much. */
  #spend(key: string, cost: number): boolean {
    const lease = this.#leases.get(key);
    if (lease === undefined || lease.tokens < cost || Date.now() >= lease.until) return false;
    lease.tokens -= cost;
    return true;
  }

  /** One `LEASE` call: whether the take was granted, or undefined when Redis could not answer. */
  async #call(key: string, cost: number, leasing: boolean): Promise<boolean | undefined> {
    const now = Date.now();
    const lease = this.#leases.get(key);
    const live = lease !== undefined && now < lease.until;
    const held = live ? lease.tokens : 0;
    // Claimed by this take while it asks: a take racing it must not count them too.
    if (live) lease.tokens = 0;
    const need = cost - held;
    // Spent within its life: the next lease doubles. Expired with tokens left: it halves.
    const size =
      lease === undefined || !leasing
        ? 0
        : live
          ? Math.min(this.#maxLease, Math.max(1, lease.size * 2))
          : lease.tokens > 0
            ? Math.floor(lease.size / 2)
            : lease.size;
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
        // The bucket is spent, but a lease that landed meanwhile may cover it.
        return this.#spend(key, cost);
      }
      if (leasing) this.#keep(key, { tokens: granted - need, until: now + LEASE_MS, size });
      return true;
    } catch (error) {
      if (!(error instanceof RedisFailure)) throw error;
      this.#giveBack(key, lease, held);
      return undefined;
    }
  }

  /** Tokens claimed from `lease` go back to it, while it is still this key's (never into a later lease: they would outlive it). */
  #giveBack(key: string, lease: Lease | undefined, tokens: number): void {
    if (tokens > 0 && lease !== undefined && this.#leases.get(key) === lease) lease.tokens += tokens;
  }

  #keep(key: string, lease: Lease): void {
    const current = this.#leases.get(key);
    this.#leases.delete(key);
    // Calls of one key overlapped and the other's lease is still live: keep the tokens of both,
    // spent by the earlier deadline of the two (neither outlives what Redis counts as leased).
    const merged =
      current !== undefined && current.tokens > 0 && Date.now() < current.until
        ? { tokens: current.tokens + lease.tokens, until: Math.min(current.until, lease.until), size: lease.size }
        : lease;
    this.#leases.set(key, merged);
    if (this.#leases.size > MAX_LEASES) this.#leases.delete(this.#leases.keys().next().value!);
  }
}
