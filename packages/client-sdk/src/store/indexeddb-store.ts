import { ClientStoreError } from './errors.js';
import type { ClientStore } from './store.js';
import { checkStoreKey, checkStorePrefix, checkStoreValue } from './store.js';

/** The object store inside the database: out-of-line string keys, string values. */
const OBJECT_STORE = 'kv';
const DB_VERSION = 1;

function promised<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Resolves when a read-write transaction has committed (what makes `set` durable). */
function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new ClientStoreError('ERR_STORE_CLOSED'));
  });
}

/**
 * The keys that start with `prefix`: from the prefix up to (not including) the prefix with its last
 * code unit raised by one, U+FFFF units dropped first. No upper bound when nothing can be raised.
 */
function prefixRange(prefix: string): IDBKeyRange | undefined {
  let end = prefix;
  while (end.length > 0 && end.charCodeAt(end.length - 1) === 0xffff) end = end.slice(0, -1);
  if (prefix === '') return undefined;
  if (end === '') return IDBKeyRange.lowerBound(prefix);
  const upper = end.slice(0, -1) + String.fromCharCode(end.charCodeAt(end.length - 1) + 1);
  return IDBKeyRange.bound(prefix, upper, false, true);
}

/** A store in the browser's IndexedDB: one database per name, one object store of strings. */
export class IndexedDbStore implements ClientStore {
  readonly #db: IDBDatabase;
  #closed = false;

  private constructor(db: IDBDatabase) {
    this.#db = db;
    // Another tab upgrading the database: let it, and refuse further calls here.
    db.onversionchange = () => this.close();
  }

  /** Opens (creating when needed) the database `name` of `indexedDB` (default: the global one). */
  static async open(name: string, factory: IDBFactory = globalThis.indexedDB): Promise<IndexedDbStore> {
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('IndexedDbStore needs a database name');
    if (factory === undefined) throw new TypeError('IndexedDB is not available here');
    const request = factory.open(name, DB_VERSION);
    request.onupgradeneeded = () => {
      if (!request.result.objectStoreNames.contains(OBJECT_STORE)) request.result.createObjectStore(OBJECT_STORE);
    };
    return new IndexedDbStore(await promised(request));
  }

  async get(key: string): Promise<string | undefined> {
    checkStoreKey(key);
    const value = await promised(this.#tx('readonly').objectStore(OBJECT_STORE).get(key));
    return typeof value === 'string' ? value : undefined;
  }

  async set(key: string, value: string): Promise<void> {
    checkStoreKey(key);
    checkStoreValue(value);
    const tx = this.#tx('readwrite');
    tx.objectStore(OBJECT_STORE).put(value, key);
    await committed(tx);
  }

  async delete(key: string): Promise<void> {
    checkStoreKey(key);
    const tx = this.#tx('readwrite');
    tx.objectStore(OBJECT_STORE).delete(key);
    await committed(tx);
  }

  async keys(prefix: string): Promise<string[]> {
    checkStorePrefix(prefix);
    const store = this.#tx('readonly').objectStore(OBJECT_STORE);
    const keys = await promised(store.getAllKeys(prefixRange(prefix)));
    // IndexedDB already returns them in code-unit order; the filter and sort keep the contract exact.
    return keys.filter((k): k is string => typeof k === 'string' && k.startsWith(prefix)).sort();
  }

  /** Closes the connection; later calls throw `ClientStoreError('ERR_STORE_CLOSED')`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #tx(mode: IDBTransactionMode): IDBTransaction {
    if (this.#closed) throw new ClientStoreError('ERR_STORE_CLOSED');
    return this.#db.transaction(OBJECT_STORE, mode);
  }
}
