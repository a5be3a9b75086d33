import { BoundedMap } from '@wmp/jsonrpc-envelope';

export interface DocumentCacheOptions {
  /** Entries kept (default 1000); the oldest goes first. */
  readonly maxEntries?: number;
  /** How long an answer is reused (default 300 s). */
  readonly ttlSeconds?: number;
  /** How long a failure is remembered, so that a client cannot make us fetch again and again (default 60 s). */
  readonly failureTtlSeconds?: number;
  readonly now?: () => number;
}

type Entry<T> =
  | { readonly value: T; readonly expiresAt: number }
  | { readonly error: unknown; readonly expiresAt: number };

/**
 * What was fetched for a key (an issuer's keys, a status list, a type's metadata), kept a while,
 * failures too; concurrent loads of one key share one fetch. Bounded in entries.
 */
export class DocumentCache<T> {
  readonly #entries: BoundedMap<string, Entry<T>>;
  readonly #inFlight = new Map<string, Promise<T>>();
  readonly #ttlMs: number;
  readonly #failureTtlMs: number;
  readonly #now: () => number;

  constructor(options: DocumentCacheOptions = {}) {
    this.#entries = new BoundedMap(Math.max(1, options.maxEntries ?? 1000));
    this.#ttlMs = (options.ttlSeconds ?? 300) * 1000;
    this.#failureTtlMs = (options.failureTtlSeconds ?? 60) * 1000;
    this.#now = options.now ?? Date.now;
  }

  async get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit !== undefined && hit.expiresAt > this.#now()) {
      if ('error' in hit) throw hit.error;
      return hit.value;
    }
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) return pending;
    const loading = load().then(
      (value) => {
        this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
        return value;
      },
      (error: unknown) => {
        this.#entries.set(key, { error, expiresAt: this.#now() + this.#failureTtlMs });
        throw error;
      },
    );
    const shared = loading.finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, shared);
    return shared;
  }
}
