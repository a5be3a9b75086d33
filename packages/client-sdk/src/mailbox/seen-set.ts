import { BoundedMap } from '@wmp/jsonrpc-envelope';
import type { ClientStore } from '../store/store.js';

/** Where the dedupe set is kept. */
export const SEEN_STORE_KEY = 'mailbox/seen';

interface SeenDocument {
  readonly version: 1;
  /** `[key, expiry ms]`, oldest first. */
  readonly entries: readonly (readonly [string, number])[];
}

/**
 * Event ids and envelope keys already handed to the application, each kept until its event
 * expires (a box serves nothing past that, and the time check refuses it), at most `max` of them
 * (the oldest go first). Kept in memory and saved as one document per commit.
 */
export class SeenSet {
  readonly #entries: BoundedMap<string, number>;

  private constructor(max: number) {
    this.#entries = new BoundedMap(max);
  }

  static async load(store: ClientStore, max: number): Promise<SeenSet> {
    const set = new SeenSet(max);
    const text = await store.get(SEEN_STORE_KEY);
    if (text === undefined) return set;
    try {
      const doc = JSON.parse(text) as SeenDocument;
      if (doc?.version === 1 && Array.isArray(doc.entries)) {
        for (const entry of doc.entries) {
          if (Array.isArray(entry) && typeof entry[0] === 'string' && Number.isFinite(entry[1])) {
            set.#add(entry[0], entry[1]);
          }
        }
      }
    } catch {
      // A damaged set only costs deduplication of what is still queued: start afresh.
    }
    return set;
  }

  get size(): number {
    return this.#entries.size;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Remembers `keys` until `expiresAt` (ms). */
  add(keys: readonly string[], expiresAt: number): void {
    for (const key of keys) this.#add(key, expiresAt);
  }

  /** Drops entries that expired before `cutoff` (ms). */
  prune(cutoff: number): void {
    for (const [key, exp] of this.#entries) if (exp < cutoff) this.#entries.delete(key);
  }

  async save(store: ClientStore): Promise<void> {
    const doc: SeenDocument = { version: 1, entries: [...this.#entries] };
    await store.set(SEEN_STORE_KEY, JSON.stringify(doc));
  }

  #add(key: string, expiresAt: number): void {
    this.#entries.delete(key); // re-added at the end: the newest
    this.#entries.set(key, expiresAt);
  }
}
