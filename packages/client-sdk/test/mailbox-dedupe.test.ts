import { describe, expect, it } from 'vitest';
import { MemoryClientStore, SEEN_STORE_KEY } from '../src/index.js';
import { envelopeSeenKey, eventSeenKey } from '../src/mailbox/examine.js';
import { SeenSet } from '../src/mailbox/seen-set.js';

describe('SeenSet', () => {
  it('remembers keys until their expiry, at most max of them, oldest dropped first', async () => {
    const store = new MemoryClientStore();
    const set = await SeenSet.load(store, 3);
    set.add(['a'], 100);
    set.add(['b', 'c'], 200);
    set.add(['d'], 300); // over the bound: 'a' goes
    expect(['a', 'b', 'c', 'd'].map((k) => set.has(k))).toEqual([false, true, true, true]);
    set.prune(250); // 'b' and 'c' expired
    expect([set.has('b'), set.has('c'), set.has('d'), set.size]).toEqual([false, false, true, 1]);
  });

  it('saves and loads itself, and starts afresh from a damaged document', async () => {
    const store = new MemoryClientStore();
    const set = await SeenSet.load(store, 10);
    set.add(['x', 'y'], 1000);
    await set.save(store);
    const loaded = await SeenSet.load(store, 10);
    expect([loaded.has('x'), loaded.has('y'), loaded.size]).toEqual([true, true, 2]);
    expect((await SeenSet.load(store, 1)).size).toBe(1); // a lower bound applies on load
    await store.set(SEEN_STORE_KEY, '{"version":1,"entries":[["ok",5],[3,4],"junk"]}');
    expect((await SeenSet.load(store, 10)).size).toBe(1);
    await store.set(SEEN_STORE_KEY, 'not json');
    expect((await SeenSet.load(store, 10)).size).toBe(0);
  });
});

describe('dedupe keys', () => {
  const from = 'z6MkvADfGmDUFd6kzE1QaHJrbPJufdx6mZ45nSL4sJAtfSwe';
  const other = 'z6Mkgfw1pEqtyDURauhfJQPKggRs6WD5venLGuGRGoFrJCtY';

  it('keys an envelope by sender, JSON-RPC id and side, else wmp.message_id', () => {
    const request = { jsonrpc: '2.0' as const, id: 1, method: 'm', params: {} };
    const response = { jsonrpc: '2.0' as const, id: 1, result: {} };
    const named = { jsonrpc: '2.0' as const, method: 'm', params: { wmp: { message_id: 'msg-1' } } };
    const bare = { jsonrpc: '2.0' as const, method: 'm', params: { body: 'x' } };
    const keys = [
      envelopeSeenKey(from, request),
      envelopeSeenKey(from, { ...request, id: '1' }),
      envelopeSeenKey(from, response),
      envelopeSeenKey(other, request),
      envelopeSeenKey(from, named),
    ];
    expect(new Set(keys).size).toBe(5);
    expect(keys.every((k) => /^e[0-9a-f]{32}$/.test(k!))).toBe(true);
    expect(envelopeSeenKey(from, { ...request, params: { body: 'changed' } })).toBe(keys[0]);
    expect(envelopeSeenKey(from, bare)).toBeUndefined();
    expect(eventSeenKey('ab'.repeat(32))).toBe('ab'.repeat(16));
  });
});
