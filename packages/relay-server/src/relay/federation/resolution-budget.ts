import { TokenBuckets } from '../../coordination/memory/token-buckets.js';
import type { FederationTimings } from './federation-config.js';

/**
 * What lookups that may fetch cost (docs/federation-profile.md): a token of the identity that
 * caused one, and one of everyone's, so that neither one identity nor many fresh ones make the
 * relay fetch without bound. In this node's memory: each node bounds its own fetches.
 */
export class ResolutionBudget {
  readonly #perIdentity: TokenBuckets;
  readonly #total: TokenBuckets;

  constructor(t: FederationTimings, now: () => number) {
    this.#perIdentity = new TokenBuckets({ perSecond: t.resolvesPerSecond, burst: t.resolveBurst, now });
    this.#total = new TokenBuckets({ perSecond: t.resolvesPerSecondTotal, burst: t.resolveBurstTotal, now });
  }

  /** Spends one lookup of `asker` (none: a lookup the relay makes itself) and of everyone; false beyond. */
  take(asker: string | undefined): boolean {
    return (asker === undefined || this.#perIdentity.take(asker)) && this.#total.take('all');
  }
}
