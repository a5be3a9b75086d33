// A cluster node's copies of session records (src/relay/sessions/session-cache.ts): nodes on one
// shared store, each with its cache, told of each other's changes through a memory hub
// (session-cache-redis.test.ts: through a real Redis). A copy is never served once another node
// changed or deleted the session, nor past its age or its session's life.
import { MemorySessionStore, type SessionStore, tokenHash } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { MemoryCoordinationHub } from '../src/index.js';
import { CachedSessionStore } from '../src/relay/sessions/session-cache.js';
import { sessionStoreSuite } from '../src/storage/testing/session-store.suite.js';
import { LIMITS, record } from './fixtures/session-cache.js';

const caches: CachedSessionStore[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.stop();
});

/** Nodes on one store and one memory hub, each with its cache, started. */
async function memoryNodes(count: number, store: SessionStore, limits = LIMITS, now = Date.now) {
  const hub = new MemoryCoordinationHub();
  const nodes: CachedSessionStore[] = [];
  for (let i = 0; i < count; i++) {
    const cache = new CachedSessionStore(store, hub.node(`node-${i}`), limits, now);
    await cache.start();
    caches.push(cache);
    nodes.push(cache);
  }
  return nodes;
}

sessionStoreSuite('cached on a cluster node (memory coordination)', async (limits) => {
  const [cache] = await memoryNodes(1, new MemorySessionStore(limits));
  return { store: cache!, close: async () => cache!.stop() };
});

describe('CachedSessionStore on a memory hub', () => {
  it('answers a node from its copy, and drops it at once when another node deletes or changes the session', async () => {
    const [a, b] = await memoryNodes(2, new MemorySessionStore());
    const r = record();
    await a!.create(r);
    expect(await b!.get(r.id)).toEqual(r);
    expect(await b!.get(r.id)).toEqual(r);
    expect(b!.hits).toBe(1);

    const changed = await a!.update(r.id, (s) => ({
      ...s,
      resumptionTokens: [{ hash: tokenHash('rt-2'), identity: s.initiator }],
    }));
    expect(await b!.get(r.id)).toEqual(changed);
    await a!.delete(r.id);
    expect(await b!.get(r.id)).toBeUndefined();
    expect(b!.hits).toBe(1);
  });

  it('resolves a write only once a node whose notes come late dropped its copy', async () => {
    const shared = new MemorySessionStore();
    const hub = new MemoryCoordinationHub();
    const late = hub.node('late');
    // The change notes reach this node a while after they were sent (a busy node, a slow link).
    const subscribe: typeof late.broadcast.subscribe = (topic, handler) =>
      late.broadcast.subscribe(topic, (seq, note, body) => {
        setTimeout(() => handler(seq, note, body), 50);
      });
    const broadcast = new Proxy(late.broadcast, {
      get(target, key) {
        if (key === 'subscribe') return subscribe;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const [writer, reader] = [
      new CachedSessionStore(shared, hub.node('writer'), LIMITS),
      new CachedSessionStore(shared, { ...late, broadcast }, LIMITS),
    ];
    for (const c of [writer, reader]) {
      await c.start();
      caches.push(c);
    }
    const r = record();
    await writer.create(r);
    await reader.get(r.id);
    expect(await reader.get(r.id)).toEqual(r);
    expect(reader.hits).toBe(1);
    const closed = await writer.update(r.id, (s) => ({ ...s, state: 'closed' }));
    // The very next read there, once the close resolved: the copy went before it did.
    expect(await reader.get(r.id)).toEqual(closed);
    expect(reader.hits).toBe(1);
  });

  it('keeps no answer of a read that a change on another node overtook', async () => {
    const shared = new MemorySessionStore();
    let release: (() => void) | undefined;
    // The read happens at once, its answer is held back: a change lands in between.
    const slow: SessionStore = Object.assign(Object.create(shared) as SessionStore, {
      get: async (id: string) => {
        const read = await shared.get(id);
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return read;
      },
    });
    const hub = new MemoryCoordinationHub();
    const [writer, reader] = [
      new CachedSessionStore(shared, hub.node('w'), LIMITS),
      new CachedSessionStore(slow, hub.node('r'), LIMITS),
    ];
    for (const c of [writer, reader]) {
      await c.start();
      caches.push(c);
    }
    const r = record();
    await writer.create(r);
    const reading = reader.get(r.id);
    await waitFor(() => release !== undefined, 5000, 'the read to start');
    const changed = await writer.update(r.id, (s) => ({
      ...s,
      authenticated: [...s.authenticated, 'did:key:z6MkBob'],
    }));
    release!();
    expect(await reading).toEqual(r); // what the store said when it was read
    release = undefined;
    const again = reader.get(r.id);
    await waitFor(() => release !== undefined, 5000, 'a second read of the store');
    release!();
    expect(await again).toEqual(changed);
  });

  it('serves no copy of a session that is not active, expires within the copy’s age, or is older than its age', async () => {
    let clock = Date.now();
    const store = new MemorySessionStore();
    const [node] = await memoryNodes(1, store, { ...LIMITS, maxAgeMs: 1000 }, () => clock);
    const pending = record({ state: 'pending' });
    const closing = record({ expiresAt: clock + 500 });
    const active = record();
    for (const r of [pending, closing, active]) await store.create(r);
    for (const r of [pending, closing, active]) {
      await node!.get(r.id);
      await node!.get(r.id);
    }
    expect(node!.hits).toBe(1); // only the active one, far from its expiry
    clock += 1000;
    await node!.get(active.id);
    expect(node!.hits).toBe(1); // its copy was too old: read again
    expect(node!.misses).toBe(6);
  });

  it('holds at most maxEntries copies and maxChars characters, dropping the oldest first', async () => {
    const store = new MemorySessionStore();
    const size = JSON.stringify(record()).length;
    const [node] = await memoryNodes(1, store, {
      maxEntries: 3,
      maxChars: size * 2 + Math.floor(size / 2),
      maxAgeMs: 60_000,
    });
    const records = [record(), record(), record(), record()];
    for (const r of records) await store.create(r);
    for (const r of records) await node!.get(r.id);
    expect(node!.size).toBe(2); // characters bind first here
    await node!.get(records[3]!.id);
    await node!.get(records[2]!.id);
    expect(node!.hits).toBe(2);
    await node!.get(records[0]!.id);
    expect(node!.hits).toBe(2);
    const big = record({ participants: Array.from({ length: 200 }, (_, i) => `did:key:z6MkParticipant${i}`) });
    await store.create(big);
    await node!.get(big.id);
    await node!.get(big.id);
    expect(node!.hits).toBe(2); // larger than the whole budget: never kept
  });
});
