// A cluster node's copies of session records (src/relay/sessions/session-cache.ts) told of each
// other's changes through a real Redis of this file's own (session-cache.test.ts: a memory hub).
// A copy is never served once another node changed or deleted the session, nor while Redis is down.
import { MemorySessionStore, type SessionStore } from '@wmp/session';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../test-support/services/index.js';
import { waitFor } from '../../../test-support/wait-for.js';
import { connectRedisCoordination, type RedisCoordination } from '../src/redis.js';
import { CachedSessionStore } from '../src/relay/sessions/session-cache.js';
import { LIMITS, record } from './fixtures/session-cache.js';

const caches: CachedSessionStore[] = [];

describe('CachedSessionStore on Redis', () => {
  let server: RedisServer;
  const coordinations: RedisCoordination[] = [];
  let prefixes = 0;
  beforeAll(async () => {
    server = await startRedis({ name: 'session-cache' });
  });
  afterAll(() => server?.destroy());
  afterEach(async () => {
    for (const c of caches.splice(0)) c.stop();
    for (const c of coordinations.splice(0)) await c.close();
    if (!server.running) await server.restart();
  });

  async function redisNodes(
    count: number,
    store: SessionStore,
  ): Promise<{ nodes: CachedSessionStore[]; coordinations: RedisCoordination[] }> {
    const prefix = `sc${++prefixes}:`;
    const nodes: CachedSessionStore[] = [];
    const own: RedisCoordination[] = [];
    for (let i = 0; i < count; i++) {
      const coordination = await connectRedisCoordination({
        url: server.url,
        nodeId: `node-${i}`,
        prefix,
        maxReconnectDelayMs: 50,
        commandTimeoutMs: 300,
        pingIntervalMs: 100,
      });
      coordinations.push(coordination);
      own.push(coordination);
      const cache = new CachedSessionStore(store, coordination, LIMITS);
      await cache.start();
      caches.push(cache);
      nodes.push(cache);
    }
    return { nodes, coordinations: own };
  }

  it('drops a copy when another node deletes the session', async () => {
    const { nodes } = await redisNodes(2, new MemorySessionStore());
    const [a, b] = nodes as [CachedSessionStore, CachedSessionStore];
    const r = record();
    await a.create(r);
    await b.get(r.id);
    expect(await b.get(r.id)).toEqual(r);
    expect(b.hits).toBe(1);
    await a.delete(r.id);
    await waitFor(() => b.size === 0, 5000, 'the change note');
    expect(await b.get(r.id)).toBeUndefined();
  });

  it('serves no copy while Redis is down (a change then cannot be told), and keeps copies again once it is back', async () => {
    const {
      nodes,
      coordinations: [, bc],
    } = await redisNodes(2, new MemorySessionStore());
    const [a, b] = nodes as [CachedSessionStore, CachedSessionStore];
    const r = record();
    await a.create(r);
    await b.get(r.id);
    await server.kill();
    await waitFor(() => bc!.health() === 'degraded', 5000, 'the outage');
    expect(b.size).toBe(0);
    const hits = b.hits;
    expect(await b.get(r.id)).toEqual(r);
    expect(await b.get(r.id)).toEqual(r);
    expect(b.hits).toBe(hits); // both read the store
    await a.delete(r.id); // its note is lost with Redis
    expect(await b.get(r.id)).toBeUndefined();

    await server.restart();
    await waitFor(() => bc!.health() === 'ok' && bc!.broadcast.listening('sessions'), 10_000, 'Redis back');
    const again = record();
    await a.create(again);
    await b.get(again.id);
    expect(await b.get(again.id)).toEqual(again);
    expect(b.hits).toBe(hits + 1);
  });
});
