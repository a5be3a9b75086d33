import { MemorySessionStore } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { MemoryBoxStore, MemoryQueueStore, MemoryRelayStores } from '../src/index.js';
import { boxStoreSuite } from '../src/storage/testing/box-store.suite.js';
import { queueStoreSuite } from '../src/storage/testing/queue-store.suite.js';
import { sessionStoreSuite } from '../src/storage/testing/session-store.suite.js';
import { storeInventorySuite } from '../src/storage/testing/store-inventory.suite.js';

// The in-memory adapters against the shared suites (no `reopen`: nothing is durable).
queueStoreSuite('memory', async (limits) => {
  const store = new MemoryQueueStore(limits);
  return { store, close: async () => store.close() };
});

boxStoreSuite('memory', async (limits) => {
  const store = new MemoryBoxStore(limits);
  return { store, close: async () => store.close() };
});

sessionStoreSuite('memory (@wmp/session)', async (limits) => ({
  store: new MemorySessionStore(limits),
  close: async () => {},
}));

sessionStoreSuite('memory (listed, MemoryRelayStores)', async (sessions) => ({
  store: new MemoryRelayStores({ sessions }).sessions,
  close: async () => {},
}));

storeInventorySuite('memory', async (box) => {
  const store = new MemoryRelayStores({ box });
  return { store, close: () => store.close() };
});

describe('MemoryRelayStores', () => {
  it('bundles the three memory stores and closes them together', async () => {
    const stores = new MemoryRelayStores({
      queue: { maxQueued: 7 },
      box: { boxBytes: 1000 },
      sessions: { maxSessions: 3 },
    });
    expect(stores.queue.limits.maxQueued).toBe(7);
    expect(stores.box.limits.boxBytes).toBe(1000);
    await stores.close();
    await expect(stores.queue.totals()).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
    await expect(stores.box.totals()).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
  });

  it('refuses bad configuration at construction', () => {
    expect(() => new MemoryQueueStore({ maxQueued: 0 })).toThrow(RangeError);
    expect(() => new MemoryBoxStore({ strangerBits: 256 })).toThrow(RangeError);
    expect(() => new MemoryBoxStore({ boxBytes: 1.5 })).toThrow(RangeError);
  });
});
