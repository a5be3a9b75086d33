// The Redis coordination adapters on a real Redis 7.0 (a throwaway server of this file's own):
// the shared suites, then what only a real server shows (TTLs, Lua semantics, outages).
import { createClient, type RedisClientType } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../../test-support/services/index.js';
import { LEASE } from '../../src/coordination/redis/scripts.js';
import type { Coordination } from '../../src/index.js';
import {
  connectRedisCoordination,
  type RedisCoordination,
  type RedisCoordinationOptions,
  type RedisTokenBuckets,
} from '../../src/redis.js';
import { type CoordinationFactory, coordinationSuite, until } from '../../src/testing.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis({ name: 'coordination' });
});
afterAll(() => server?.destroy());

let clusters = 0;
// Each cluster is a key prefix of its own on the one server: nothing is shared between tests.
const redis: CoordinationFactory = async (limits) => {
  const prefix = `t${++clusters}:`;
  const nodes: RedisCoordination[] = [];
  return {
    async node(nodeId) {
      const node = await connectRedisCoordination({
        url: server.url,
        nodeId,
        prefix,
        limits,
        countGranularityMs: 20,
        maxReconnectDelayMs: 100,
      });
      nodes.push(node);
      return node;
    },
    async crash(node: Coordination) {
      (node as RedisCoordination).crash();
    },
    async close() {
      await Promise.all(nodes.map((node) => node.close()));
    },
  };
};

coordinationSuite('redis', redis);

describe('Redis coordination: what is kept in Redis, and how long', () => {
  let raw: RedisClientType;
  const nodes: RedisCoordination[] = [];
  beforeAll(async () => {
    raw = createClient({ url: server.url });
    raw.on('error', () => {});
    await raw.connect();
  });
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
  });
  afterAll(() => raw?.destroy());

  async function node(prefix: string, options: Partial<RedisCoordinationOptions> = {}): Promise<RedisCoordination> {
    const n = await connectRedisCoordination({ url: server.url, nodeId: `node ${prefix}`, prefix, ...options });
    nodes.push(n);
    return n;
  }

  it('keeps a bucket only until it would be full again, under its prefix and hash tag', async () => {
    const c = await node('lua1:');
    const limiter = c.rateLimiter('bytes', { perSecond: 10, burst: 10 });
    expect(await limiter.take('did:key:z6MkA', 5)).toBe(true);
    const key = 'lua1:rl:bytes:{did:key:z6MkA}';
    expect(await raw.keys('lua1:*')).toEqual([key]);
    const ttl = await raw.pTTL(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(501); // 5 tokens at 10/s
    expect(Number(await raw.hGet(key, 't'))).toBeCloseTo(5, 0);
    // A take that leaves it full (cost 0) stores nothing.
    expect(await c.rateLimiter('free', { perSecond: 1, burst: 1 }).take('k', 0)).toBe(true);
    expect(await raw.exists('lua1:rl:free:{k}')).toBe(0);
  });

  it('leases a take early, never an extra one: the bucket and the unspent leases hold no more than the burst', async () => {
    const key = 'lua4:rl:lease:{k}';
    // Refill is instant at this rate: only the cap on what is leased keeps the bucket below the burst.
    const lease = async (need: number, want: number) =>
      Number(
        await raw.eval(LEASE.source, {
          keys: [key],
          arguments: ['1000000000', '10', String(need), String(want), '60000'],
        }),
      );
    expect(await lease(1, 6)).toBe(6); // 1 spent now, 5 leased out
    expect(Number(await raw.hGet(key, 'c'))).toBe(5);
    // Refilled at once, but to the burst less what may still be spent from the lease.
    expect(await lease(1, 100)).toBe(5);
    expect(await lease(11, 11)).toBe(0); // more than the burst: refused, nothing spent
    expect(await lease(1, 1)).toBe(1);
  });

  it('lets a busy key spend leases locally: a few calls a second, and a fresh node gets only what the bucket holds', async () => {
    const [a, b] = [await node('lua5:'), await node('lua5:')];
    // 8 per second, burst 40: leases of up to 2 tokens; nothing much refills during the test.
    const options = { perSecond: 8, burst: 40 };
    const onA = a.rateLimiter('requests', options) as RedisTokenBuckets;
    const start = Date.now();
    let spent = 0;
    while (await onA.take('did:key:z6MkBusy')) spent++;
    expect(onA.calls).toBeLessThan(spent * 0.75); // two of three takes, at least, from leases
    // Another node (or this one restarted) starts from what the bucket holds: it is spent.
    const onB = b.rateLimiter('requests', options) as RedisTokenBuckets;
    let more = 0;
    for (let i = 0; i < 10; i++) if (await onB.take('did:key:z6MkBusy')) more++;
    const refilled = Math.ceil((8 * (Date.now() - start)) / 1000);
    expect(spent + more).toBeLessThanOrEqual(40 + refilled);
    expect(spent).toBeGreaterThanOrEqual(40);
  });

  it('shares one call among the takes of a key in flight, and two nodes taking at once never pass the bucket', async () => {
    const [a, b] = [await node('lua6:'), await node('lua6:')];
    // 40 per second, burst 200: leases of up to 10 tokens.
    const options = { perSecond: 40, burst: 200 };
    const onA = a.rateLimiter('requests', options) as RedisTokenBuckets;
    const onB = b.rateLimiter('requests', options) as RedisTokenBuckets;
    const start = Date.now();
    let [spent, takes] = [0, 0];
    // Rounds of 8 takes in flight on each node at once, until the bucket is spent.
    for (let refused = false; !refused; ) {
      const round = [onA, onB].flatMap((limiter) => Array.from({ length: 8 }, () => limiter.take('did:key:z6MkBurst')));
      const answers = await Promise.all(round);
      takes += round.length;
      spent += answers.filter(Boolean).length;
      refused = answers.some((granted) => !granted);
    }
    const refilled = Math.ceil((40 * (Date.now() - start)) / 1000);
    expect(spent).toBeLessThanOrEqual(200 + refilled);
    // What the last leases forgo, at most (a take Redis refuses still spends a lease that landed).
    expect(spent).toBeGreaterThanOrEqual(200 - 2 * 10);
    // The takes in flight wait for their key's call instead of each making one.
    expect(onA.calls + onB.calls).toBeLessThan(takes / 3);
    expect(onA.fallbacks + onB.fallbacks).toBe(0);
  });

  it('spends a burst of takes larger than the leases in full: the takes that waited enough ask for their need alone', async () => {
    const c = await node('lua8:');
    const limiter = c.rateLimiter('requests', { perSecond: 40, burst: 80 }) as RedisTokenBuckets;
    const start = Date.now();
    const answers = await Promise.all(Array.from({ length: 200 }, () => limiter.take('did:key:z6MkMany')));
    const refilled = Math.ceil((40 * (Date.now() - start)) / 1000);
    const spent = answers.filter(Boolean).length;
    expect(spent).toBeLessThanOrEqual(80 + refilled);
    expect(spent).toBeGreaterThanOrEqual(80 - 10);
    expect(limiter.calls).toBeLessThan(200);
  });

  it('falls back to the local bucket for a call Redis does not answer, and for the takes waiting on it', async () => {
    const c = await node('lua7:', { commandTimeoutMs: 300, pingIntervalMs: 100 });
    // 4 per second, burst 8: leases of 1 token, so every take waits for the call on its way.
    const limiter = c.rateLimiter('requests', { perSecond: 4, burst: 8 }) as RedisTokenBuckets;
    // Scripts that write wait while the server is paused: the call meets its deadline.
    await raw.sendCommand(['CLIENT', 'PAUSE', '5000', 'WRITE']);
    let answers: boolean[];
    const start = Date.now();
    try {
      answers = await Promise.all(Array.from({ length: 20 }, () => limiter.take('did:key:z6MkPaused')));
    } finally {
      await raw.sendCommand(['CLIENT', 'UNPAUSE']);
    }
    // One call, one deadline: the waiting takes did not queue calls of their own behind it.
    expect(Date.now() - start).toBeLessThan(1500);
    expect(limiter.calls).toBe(1);
    expect(limiter.fallbacks).toBe(20);
    // Limited per node, never unlimited: the local bucket's burst (and what refills meanwhile).
    const spent = answers.filter(Boolean).length;
    expect(spent).toBeGreaterThanOrEqual(8);
    expect(spent).toBeLessThanOrEqual(9);
    // Back to the shared bucket once Redis answers.
    await until('the link healthy again', () => c.health() === 'ok');
    await limiter.take('did:key:z6MkPaused');
    expect(limiter.calls).toBe(2);
    expect(limiter.fallbacks).toBe(20);
  });

  it('gives each key-package window its TTL and id; a refund of the last fetch deletes it', async () => {
    const c = await node('lua2:');
    const budgets = c.keyPackageBudgets({ perTarget: 3, windowMs: 60_000 });
    const refund = await budgets.reserve('caller', 'target');
    const key = 'lua2:kp:key-packages:{target}';
    expect(await raw.hGet(key, 'n')).toBe('1');
    expect(await raw.pTTL(key)).toBeGreaterThan(59_000);
    await refund!();
    expect(await raw.exists(key)).toBe(0);
  });

  it('records a nonce with SET PXAT, its signer’s share in one zset that expires with its last entry, and counts the total', async () => {
    const c = await node('lua3:');
    const at = Date.now() + 300_000;
    expect(await c.nonces.useOnce('signer n1', at, { key: 'signer', source: '203.0.113.7' })).toBe(true);
    expect(await c.nonces.useOnce('signer n2', Date.now() + 10_000, { key: 'signer' })).toBe(true);
    expect(Math.abs((await raw.pExpireTime('lua3:nonce:{signer n1}')) - at)).toBeLessThanOrEqual(1);
    const share = 'lua3:nonce-key:{signer}';
    expect(await raw.zRange(share, 0, -1)).toEqual(['signer n2', 'signer n1']);
    const ttl = await raw.pTTL(share);
    expect(ttl).toBeGreaterThan(299_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    expect(await raw.zRange('lua3:nonce-src:{203.0.113.7}', 0, -1)).toEqual(['signer n1']);
    expect(await raw.hGet('lua3:nonce-totals', 'sum')).toBe('2');
    // A value with no scope counts in the total only.
    expect(await c.replays.useOnce('dpop:thumb:jti', at)).toBe(true);
    expect(await raw.keys('lua3:replay*')).toEqual(
      expect.arrayContaining(['lua3:replay:{dpop:thumb:jti}', 'lua3:replay-totals']),
    );
    expect(await raw.keys('lua3:replay-key*')).toEqual([]);
  });

  it('records a jti with SET PXAT at its expiry', async () => {
    const c = await node('lua4:');
    const at = Date.now() + 30_000;
    expect(await c.replays.useOnce('dpop:thumb:jti', at)).toBe(true);
    const expiry = await raw.pExpireTime('lua4:replay:{dpop:thumb:jti}');
    expect(Math.abs(expiry - at)).toBeLessThanOrEqual(1);
  });

  it('keeps presence as node -> expiry, the key as long as its latest entry', async () => {
    const c = await node('lua5:');
    await c.presence.announce('did:key:z6MkP', c.nodeId, 20_000);
    const key = 'lua5:presence:{did:key:z6MkP}';
    const [entry] = await raw.zRangeWithScores(key, 0, -1);
    expect(entry?.value).toBe('node lua5:');
    expect(entry!.score - Date.now()).toBeGreaterThan(19_000);
    expect(await raw.pTTL(key)).toBeGreaterThan(19_000);
  });

  it('runs its scripts again after the server forgot them (SCRIPT FLUSH: NOSCRIPT, then EVAL)', async () => {
    const c = await node('lua6:');
    expect(await c.nonces.useOnce('before', Date.now() + 300_000, { key: 'k' })).toBe(true);
    await raw.scriptFlush();
    expect(await c.nonces.useOnce('after', Date.now() + 300_000, { key: 'k' })).toBe(true);
    expect(await c.nonces.useOnce('before', Date.now() + 300_000, { key: 'k' })).toBe(false);
    expect(c.health()).toBe('ok');
  });

  it('names its connections after the node in CLIENT LIST', async () => {
    const c = await node('lua7:');
    const list = await raw.clientList();
    const names = list.map((client) => client.name);
    expect(names).toContain(`wmp:${c.nodeId.replace(' ', '_')}:cmd`);
    expect(names).toContain(`wmp:${c.nodeId.replace(' ', '_')}:sub`);
  });
});
