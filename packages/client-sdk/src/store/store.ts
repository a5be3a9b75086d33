import { ClientStoreError } from './errors.js';

/**
 * Where the SDK keeps what must outlive a process: the identity, cursors, dedupe sets, sessions.
 * Values are strings (JSON by convention). Every implementation passes the same test suite.
 */
export interface ClientStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** The keys that start with `prefix`, sorted by UTF-16 code units (`Array#sort`). */
  keys(prefix: string): Promise<string[]>;
}

/** Longest key, in UTF-16 code units. */
export const MAX_STORE_KEY_LENGTH = 1024;

/** Keys are 1..1024 characters of well-formed text (no lone surrogates), the same rule in every store. */
export function checkStoreKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_STORE_KEY_LENGTH || !key.isWellFormed()) {
    throw new ClientStoreError('ERR_STORE_INVALID_KEY');
  }
}

/** A prefix is any well-formed string up to the key length (the empty prefix lists every key). */
export function checkStorePrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length > MAX_STORE_KEY_LENGTH || !prefix.isWellFormed()) {
    throw new ClientStoreError('ERR_STORE_INVALID_KEY');
  }
}

/** Values are strings that survive a UTF-8 round trip (a file or IndexedDB keeps them as text). */
export function checkStoreValue(value: unknown): asserts value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) throw new ClientStoreError('ERR_STORE_INVALID_VALUE');
}
