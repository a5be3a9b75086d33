import { RateLimitedError } from '@wmp/jsonrpc-envelope';

/** Counts in flight by key, each under its own bound: a slot is taken at once and given back once. */
export class InFlight {
  readonly #counts = new Map<string | number, number>();
  readonly #max: number;
  readonly #reason: string;

  constructor(max: number, reason: string) {
    this.#max = max;
    this.#reason = reason;
  }

  /** Takes a slot of `key`; -31007 when it holds its bound. */
  take(key: string | number): void {
    const n = this.#counts.get(key) ?? 0;
    if (n >= this.#max) throw new RateLimitedError({ reason: this.#reason });
    this.#counts.set(key, n + 1);
  }

  release(key: string | number): void {
    const n = (this.#counts.get(key) ?? 1) - 1;
    if (n <= 0) this.#counts.delete(key);
    else this.#counts.set(key, n);
  }
}

/**
 * Takes one slot of each bound under its key, or none (-31007 from the first that is full); the
 * function returned gives them all back, once.
 */
export function takeSlots(slots: ReadonlyArray<readonly [InFlight, string | number]>): () => void {
  const taken: Array<readonly [InFlight, string | number]> = [];
  try {
    for (const slot of slots) {
      slot[0].take(slot[1]);
      taken.push(slot);
    }
  } catch (e) {
    for (const [bound, key] of taken) bound.release(key);
    throw e;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const [bound, key] of taken) bound.release(key);
  };
}

/**
 * The routes each identity takes part in, as this node knows them (created here, until closed or
 * expired): at most `max` each, so that one identity cannot fill the session store with routes.
 * Also keyed by peer relay: the routes its users opened here, together.
 */
export class RoutesPerIdentity {
  readonly #routes = new Map<string, Map<string, number>>();
  readonly #max: number;
  readonly #now: () => number;
  readonly #reason: string;
  /** Entries held, and the count after the last full prune (amortised: prune when it doubled). */
  #entries = 0;
  #prunedAt = 1024;

  constructor(max: number, now: () => number, reason = 'too many routed sessions') {
    this.#max = max;
    this.#now = now;
    this.#reason = reason;
  }

  /** -31007 when `identity` already has `max` unexpired routes. */
  check(identity: string): void {
    const routes = this.#routes.get(identity);
    if (routes === undefined || routes.size < this.#max) return;
    const now = this.#now();
    for (const [id, until] of routes) if (until <= now) this.#drop(identity, routes, id);
    if (routes.size >= this.#max) throw new RateLimitedError({ reason: this.#reason });
  }

  add(identities: readonly string[], id: string, until: number): void {
    for (const identity of identities) {
      let routes = this.#routes.get(identity);
      if (routes === undefined) {
        routes = new Map();
        this.#routes.set(identity, routes);
      }
      if (!routes.has(id)) this.#entries++;
      routes.set(id, until);
    }
    if (this.#entries > 2 * this.#prunedAt) this.#prune();
  }

  remove(identities: readonly string[], id: string): void {
    for (const identity of identities) {
      const routes = this.#routes.get(identity);
      if (routes?.has(id)) this.#drop(identity, routes, id);
    }
  }

  #drop(identity: string, routes: Map<string, number>, id: string): void {
    routes.delete(id);
    this.#entries--;
    if (routes.size === 0) this.#routes.delete(identity);
  }

  /** Forgets every expired route (they left the store with the sweeper). */
  #prune(): void {
    const now = this.#now();
    for (const [identity, routes] of this.#routes) {
      for (const [id, until] of routes) if (until <= now) this.#drop(identity, routes, id);
    }
    this.#prunedAt = Math.max(1024, this.#entries);
  }
}
