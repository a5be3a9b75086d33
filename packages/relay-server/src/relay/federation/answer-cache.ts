import { BoundedMap } from '@wmp/jsonrpc-envelope';

/**
 * Answers of lookups that reach other servers, cached with a TTL of their own and a bound (oldest
 * first out), and one lookup in flight per key: a flood of messages to one unknown recipient, or
 * of identifiers under one domain, costs one fetch. A failed lookup is an answer too (the caller
 * makes it one), so nobody can have the same unanswerable question asked again and again.
 */
export class AnswerCache<T> {
  readonly #entries: BoundedMap<string, { readonly value: T; readonly until: number }>;
  readonly #inFlight = new Map<string, Promise<T>>();
  readonly #ttlOf: (value: T) => number;
  readonly #now: () => number;

  constructor(max: number, ttlOf: (value: T) => number, now: () => number) {
    this.#entries = new BoundedMap(Math.max(1, max));
    this.#ttlOf = ttlOf;
    this.#now = now;
  }

  /** The cached answer, without a lookup; undefined when none is fresh. */
  peek(key: string): T | undefined {
    const hit = this.#entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.until > this.#now()) return hit.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Whether a lookup of `key` is running now (a caller joins it instead of starting one). */
  pending(key: string): boolean {
    return this.#inFlight.has(key);
  }

  get(key: string, lookup: () => Promise<T>): Promise<T> {
    const hit = this.peek(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let pending = this.#inFlight.get(key);
    if (pending === undefined) {
      pending = lookup()
        .then((value) => {
          this.#entries.delete(key);
          this.#entries.set(key, { value, until: this.#now() + this.#ttlOf(value) });
          return value;
        })
        .finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  clear(): void {
    this.#entries.clear();
  }
}
