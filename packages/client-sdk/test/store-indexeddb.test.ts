// IndexedDB in Node through fake-indexeddb (only this test installs it); the browser test runs the
// real one in Chromium.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { ClientStoreError, IndexedDbStore } from '../src/index.js';
import { storeSuite } from './store-suite.js';

let n = 0;
const stores = new Map<unknown, string>();

storeSuite('IndexedDbStore', {
  async open() {
    const name = `wmp-test-${++n}`;
    const store = await IndexedDbStore.open(name);
    stores.set(store, name);
    return store;
  },
  async reopen(store) {
    (store as IndexedDbStore).close();
    return IndexedDbStore.open(stores.get(store)!);
  },
});

describe('IndexedDbStore', () => {
  it('keeps databases of different names apart', async () => {
    const a = await IndexedDbStore.open('wmp-apart-a');
    const b = await IndexedDbStore.open('wmp-apart-b');
    await a.set('k', 'a');
    expect(await b.get('k')).toBeUndefined();
    expect(await b.keys('')).toEqual([]);
    a.close();
    b.close();
  });

  it('refuses calls after close with ClientStoreError closed', async () => {
    const store = await IndexedDbStore.open('wmp-closed');
    await store.set('k', 'v');
    store.close();
    await expect(store.get('k')).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
    await expect(store.set('k', 'w')).rejects.toBeInstanceOf(ClientStoreError);
    const again = await IndexedDbStore.open('wmp-closed');
    expect(await again.get('k')).toBe('v');
    again.close();
  });

  it('finds keys whose prefix ends in the highest code unit', async () => {
    const store = await IndexedDbStore.open('wmp-ffff');
    for (const k of ['a\uffff', 'a\uffffb', 'a\uffff\uffff', 'b', 'a']) await store.set(k, k);
    expect(await store.keys('a\uffff')).toEqual(['a\uffff', 'a\uffffb', 'a\uffff\uffff']);
    expect(await store.keys('a')).toEqual(['a', 'a\uffff', 'a\uffffb', 'a\uffff\uffff']);
    store.close();
  });
});
