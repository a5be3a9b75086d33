// One suite for every ClientStore: the memory, file and IndexedDB stores must behave alike.
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../../test-support/code-of.js';
import { ClientStoreError, MAX_STORE_KEY_LENGTH } from '../src/index.js';
import type { ClientStore } from '../src/store/store.js';

export interface StoreHarness {
  /** A fresh, empty store. */
  open(): Promise<ClientStore>;
  /** The same data through a new instance (a restart), when the store persists. */
  reopen?(store: ClientStore): Promise<ClientStore>;
}

export function storeSuite(name: string, harness: StoreHarness): void {
  describe(`ClientStore suite: ${name}`, () => {
    it('gets what was set, undefined for a missing key, and the last value set', async () => {
      const store = await harness.open();
      expect(await store.get('a')).toBeUndefined();
      await store.set('a', '{"x":1}');
      expect(await store.get('a')).toBe('{"x":1}');
      await store.set('a', '');
      expect(await store.get('a')).toBe('');
      await store.set('a', 'second');
      expect(await store.get('a')).toBe('second');
    });

    it('deletes, and deleting a missing key is fine', async () => {
      const store = await harness.open();
      await store.set('k', 'v');
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      await store.delete('k');
      await store.delete('never-set');
      expect(await store.keys('')).toEqual([]);
    });

    it('lists the keys with a prefix, sorted, and every key for the empty prefix', async () => {
      const store = await harness.open();
      for (const k of [
        'mailbox/relay/b',
        'mailbox/relay/a',
        'mailbox/seen',
        'identity',
        'mailbox/relay/a/x',
        'mailbox/relaz',
      ]) {
        await store.set(k, k);
      }
      expect(await store.keys('mailbox/relay/')).toEqual(['mailbox/relay/a', 'mailbox/relay/a/x', 'mailbox/relay/b']);
      expect(await store.keys('mailbox/rela')).toEqual([
        'mailbox/relay/a',
        'mailbox/relay/a/x',
        'mailbox/relay/b',
        'mailbox/relaz',
      ]);
      expect(await store.keys('')).toEqual([...(await store.keys('mailbox/')), 'identity'].sort());
      expect(await store.keys('nothing')).toEqual([]);
    });

    it('keeps keys apart that differ only by case, punctuation or encoding', async () => {
      const store = await harness.open();
      const keys = [
        'A',
        'a',
        '%41',
        '.',
        '..',
        '~a',
        'a.b',
        'a/b',
        'a%2Fb',
        'http://127.0.0.1:80',
        'é',
        'e\u0301',
        '😀',
        '日本',
      ];
      for (const [i, k] of keys.entries()) await store.set(k, `v${i}`);
      for (const [i, k] of keys.entries()) expect(await store.get(k)).toBe(`v${i}`);
      expect(await store.keys('')).toEqual([...keys].sort());
      expect(await store.keys('a')).toEqual(['a', 'a%2Fb', 'a.b', 'a/b']);
    });

    it('holds keys up to the maximum length, including long non-ASCII ones, and lists them', async () => {
      const store = await harness.open();
      const long = 'k/'.padEnd(MAX_STORE_KEY_LENGTH, 'x');
      const wide = 'w/'.padEnd(300, '日');
      await store.set(long, 'long');
      await store.set(wide, 'wide');
      expect(await store.get(long)).toBe('long');
      expect(await store.get(wide)).toBe('wide');
      expect(await store.keys('k/')).toEqual([long]);
      expect(await store.keys('w/')).toEqual([wide]);
      await store.delete(long);
      expect(await store.get(long)).toBeUndefined();
      expect(await store.keys('')).toEqual([wide]);
    });

    it('keeps large and non-ASCII values exactly', async () => {
      const store = await harness.open();
      const big = 'x'.repeat(1024 * 1024);
      const text = 'ünïcødé 😀 \n\t"quoted" \\ \u0000';
      await store.set('big', big);
      await store.set('text', text);
      expect(await store.get('big')).toBe(big);
      expect(await store.get('text')).toBe(text);
    });

    it('refuses bad keys and values with ClientStoreError, and keeps the data intact', async () => {
      const store = await harness.open();
      await store.set('ok', 'v');
      const long = 'x'.repeat(MAX_STORE_KEY_LENGTH + 1);
      expect(await codeOf(store.set('', 'v'), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.set(long, 'v'), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.set('lone\ud800', 'v'), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.get(''), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.delete(long), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.keys(long), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.keys(42 as unknown as string), ClientStoreError)).toBe('ERR_STORE_INVALID_KEY');
      expect(await codeOf(store.set('k', 42 as unknown as string), ClientStoreError)).toBe('ERR_STORE_INVALID_VALUE');
      expect(await codeOf(store.set('k', 'lone\udc00'), ClientStoreError)).toBe('ERR_STORE_INVALID_VALUE');
      expect(await store.keys('')).toEqual(['ok']);
      expect(await store.get('ok')).toBe('v');
    });

    it('lands every one of many concurrent writes', async () => {
      const store = await harness.open();
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.set(`c/${String(i).padStart(2, '0')}`, `${i}`)));
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.set('same', `${i}`)));
      const keys = await store.keys('c/');
      expect(keys).toHaveLength(50);
      expect(await store.get('c/49')).toBe('49');
      expect(Number(await store.get('same'))).toBeGreaterThanOrEqual(0);
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      it('keeps everything across a new instance', async () => {
        const store = await harness.open();
        await store.set('identity', '{"version":1}');
        await store.set('mailbox/relay/https://box.example', '{"after":7}');
        await store.set('gone', 'x');
        await store.delete('gone');
        const again = await reopen(store);
        expect(await again.get('identity')).toBe('{"version":1}');
        expect(await again.get('mailbox/relay/https://box.example')).toBe('{"after":7}');
        expect(await again.keys('')).toEqual(['identity', 'mailbox/relay/https://box.example']);
      });
    }
  });
}
