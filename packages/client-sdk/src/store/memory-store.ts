import type { ClientStore } from './store.js';
import { checkStoreKey, checkStorePrefix, checkStoreValue } from './store.js';

/** A store in memory: for tests, and for applications that keep nothing between runs. */
export class MemoryClientStore implements ClientStore {
  readonly #values = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    checkStoreKey(key);
    return this.#values.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    checkStoreKey(key);
    checkStoreValue(value);
    this.#values.set(key, value);
  }

  async delete(key: string): Promise<void> {
    checkStoreKey(key);
    this.#values.delete(key);
  }

  async keys(prefix: string): Promise<string[]> {
    checkStorePrefix(prefix);
    return [...this.#values.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}
