import { BoundedMap } from '@wmp/jsonrpc-envelope';
/**
 * Where an identifier is at home (DESIGN §3 federation): `here`, the origin of another relay
 * (`https://relay.example`), or undefined when this resolver has no answer (the next one is asked).
 * A profile adds its own (core §7.5.3) through `FederationConfig.resolvers`.
 */
export type HomeAnswer = 'here' | string | undefined;

export interface HomeResolver {
  /** Shown by `ohan.relay.resolve` as the source of an answer. */
  readonly name: string;
  resolve(identifier: string): Promise<HomeAnswer> | HomeAnswer;
}

export interface Resolution {
  /** `here`, or the home relay's origin. */
  readonly home: string;
  /** The resolver that answered; `default` when none did (the recipient is kept here). */
  readonly source: string;
  /** A resolver failed on the way (a server did not answer): the answer is cached briefly only. */
  readonly uncertain?: boolean;
}

/** How long an answer reached past a failing resolver is cached at most. */
const UNCERTAIN_TTL_MS = 5_000;

/** Asks each resolver in turn; a resolver that fails counts as no answer (the next is asked). */
export async function resolveHome(
  resolvers: readonly HomeResolver[],
  identifier: string,
  ours: string,
): Promise<Resolution> {
  let uncertain = false;
  for (const resolver of resolvers) {
    let answer: HomeAnswer;
    try {
      answer = await resolver.resolve(identifier);
    } catch {
      answer = undefined;
      uncertain = true;
    }
    if (answer === undefined) continue;
    return { home: answer === ours ? 'here' : answer, source: resolver.name, ...(uncertain ? { uncertain } : {}) };
  }
  return { home: 'here', source: 'default', ...(uncertain ? { uncertain } : {}) };
}

/**
 * Resolutions cached with a TTL and a bound (oldest first out), and one lookup in flight per
 * identifier: a flood of messages to one unknown recipient costs one fetch.
 */
export class ResolutionCache {
  readonly #entries: BoundedMap<string, { readonly value: Resolution; readonly until: number }>;
  readonly #inFlight = new Map<string, Promise<Resolution>>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs: number, max: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#entries = new BoundedMap(Math.max(1, max));
    this.#now = now;
  }

  /** The cached answer, without a lookup; undefined when none is fresh. */
  peek(identifier: string): Resolution | undefined {
    const hit = this.#entries.get(identifier);
    if (hit === undefined) return undefined;
    if (hit.until > this.#now()) return hit.value;
    this.#entries.delete(identifier);
    return undefined;
  }

  get(identifier: string, lookup: () => Promise<Resolution>): Promise<Resolution> {
    const hit = this.peek(identifier);
    if (hit !== undefined) return Promise.resolve(hit);
    let pending = this.#inFlight.get(identifier);
    if (pending === undefined) {
      pending = lookup()
        .then((value) => {
          this.#put(identifier, value);
          return value;
        })
        .finally(() => this.#inFlight.delete(identifier));
      this.#inFlight.set(identifier, pending);
    }
    return pending;
  }

  #put(identifier: string, value: Resolution): void {
    this.#entries.delete(identifier);
    const ttl = value.uncertain ? Math.min(this.#ttlMs, UNCERTAIN_TTL_MS) : this.#ttlMs;
    this.#entries.set(identifier, { value, until: this.#now() + ttl });
  }

  clear(): void {
    this.#entries.clear();
  }
}
