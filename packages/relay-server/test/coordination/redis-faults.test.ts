// Redis outages against the Redis coordination, on a real server of this file's own: SIGKILL and
// restart (every key gone), one node cut off (a TCP proxy between it and Redis), a hung server
// (SIGSTOP), a full server (maxmemory), and starts without Redis. Waits on events and state only.
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { createClient } from '@redis/client';
import { ReplayCacheFullError } from '@wmp/jcs-signing';
import { NonceCacheFullError } from '@wmp/ohan-seal';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../../test-support/services/index.js';
import {
  CoordinationUnavailableError,
  isCoordinationUnavailable,
  NonceCacheUnavailableError,
  ReplayCacheUnavailableError,
} from '../../src/index.js';
import { createRelay } from '../../src/node.js';
import { connectRedisCoordination, type RedisCoordination, type RedisCoordinationOptions } from '../../src/redis.js';
import { until } from '../../src/testing.js';

const SLOW = 0.001; // tokens per second: nothing refills during a test
let server: RedisServer;
const nodes: RedisCoordination[] = [];
let prefixes = 0;
let prefix = '';

beforeAll(async () => {
  server = await startRedis({ name: 'faults' });
});
afterAll(() => server?.destroy());
beforeEach(async () => {
  if (!server.running) await server.restart();
  prefix = `f${++prefixes}:`;
});
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.close();
});

async function node(nodeId: string, options: Partial<RedisCoordinationOptions> = {}): Promise<RedisCoordination> {
  const c = await connectRedisCoordination({
    url: server.url,
    nodeId,
    prefix,
    maxReconnectDelayMs: 50,
    commandTimeoutMs: 300,
    pingIntervalMs: 100,
    ...options,
  });
  nodes.push(c);
  return c;
}

/** Resolves the next time `subscribe` calls its handler. */
function next(subscribe: (handler: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const off = subscribe(() => {
      off();
      resolve();
    });
  });
}

/** Fails after `ms` unless `promise` settles first. */
async function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('Redis SIGKILL and restart', () => {
  it('degrades while down (typed refusals, per-node limits), then resubscribes, reports the reconnect and re-announces', async () => {
    const [a, b] = [await node('a'), await node('b')];
    const who = 'did:key:z6MkBob';
    const got: (number | undefined)[] = [];
    await b.wakeUps.subscribe(who, (seq) => got.push(seq));
    await a.presence.announce(who, a.nodeId, 60_000); // refreshed every 20 s: only a re-announce brings it back soon
    const reconnected = Promise.all([
      next((h) => b.wakeUps.onReconnect(h)),
      next((h) => b.boxWakeUps.onReconnect(h)),
      next((h) => a.wakeUps.onReconnect(h)),
    ]);
    const degraded = Promise.all([next((h) => a.onHealth(h)), next((h) => b.onHealth(h))]);

    await server.kill();
    await within('both nodes to report degraded', 5000, degraded);
    expect([a.health(), b.health()]).toEqual(['degraded', 'degraded']);

    // Replays cannot be checked: refused, typed, as "full" for callers that know only that.
    const nonce = await rejection(a.nonces.useOnce('n-1', Date.now() + 300_000, { key: 'signer' }));
    expect(nonce).toBeInstanceOf(NonceCacheUnavailableError);
    expect(nonce).toBeInstanceOf(NonceCacheFullError);
    expect(isCoordinationUnavailable(nonce)).toBe(true);
    const replay = await rejection(a.replays.useOnce('jti-1', Date.now() + 60_000));
    expect(replay).toBeInstanceOf(ReplayCacheUnavailableError);
    expect(replay).toBeInstanceOf(ReplayCacheFullError);
    await expect(b.presence.nodesOf(who)).rejects.toBeInstanceOf(CoordinationUnavailableError);
    // Limits hold per node.
    const limiter = a.rateLimiter('requests', { perSecond: SLOW, burst: 2 });
    expect([await limiter.take('k'), await limiter.take('k'), await limiter.take('k')]).toEqual([true, true, false]);
    const budgets = a.keyPackageBudgets({ perTarget: 1 });
    expect(await budgets.reserve('c1', 'T')).toBeDefined();
    expect(await budgets.reserve('c2', 'T')).toBeUndefined();
    expect(a.fallbacks).toBeGreaterThanOrEqual(5);
    // Hints resolve at once and catch up later.
    expect(await within('publish', 1000, a.wakeUps.publish(who, 9))).toBe(0);
    const late: (number | undefined)[] = [];
    const lateOff = await within(
      'subscribe',
      1000,
      b.wakeUps.subscribe('did:key:z6MkLate', (seq) => late.push(seq)),
    );
    expect(lateOff).toBeTypeOf('function');
    await a.presence.announce('did:key:z6MkNew', a.nodeId, 60_000);

    await server.restart();
    await within('every reconnect report', 10_000, reconnected);
    await until('both nodes healthy', () => a.health() === 'ok' && b.health() === 'ok');

    // Subscriptions from before the outage and from during it both work (the restarted server knew neither).
    expect(await a.wakeUps.publish(who, 10)).toBe(1);
    expect(await a.wakeUps.publish('did:key:z6MkLate', 11)).toBe(1);
    await until('both wake-ups on b', () => got.includes(10) && late.includes(11));
    // Presence is back (the empty server knew none of it) well before the 20 s refresh.
    await until('a’s presence re-announced', async () => (await b.presence.nodesOf(who)).includes(a.nodeId));
    expect(await b.presence.nodesOf('did:key:z6MkNew')).toEqual([a.nodeId]);
    // Shared again: one bucket for both nodes.
    const shared = [a, b].map((n) => n.rateLimiter('after', { perSecond: SLOW, burst: 1 }));
    expect(await shared[0]!.take('k')).toBe(true);
    expect(await shared[1]!.take('k')).toBe(false);
    expect(await a.nonces.useOnce('n-2', Date.now() + 300_000, { key: 'signer' })).toBe(true);
    expect(await b.nonces.useOnce('n-2', Date.now() + 300_000, { key: 'signer' })).toBe(false);
  });
});

/** A TCP proxy in front of the server that the test can cut (refuse and drop) and restore. */
class TcpCutter {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #open = true;
  port = 0;

  constructor(target: number) {
    this.#server = createServer((client) => {
      if (!this.#open) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
    return this;
  }

  cut(): void {
    this.#open = false;
    for (const s of this.#sockets) s.destroy();
  }

  restore(): void {
    this.#open = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

describe('one node cut off from Redis', () => {
  let proxy: TcpCutter;
  beforeEach(async () => {
    proxy = await new TcpCutter(server.port).listen();
  });
  afterEach(() => proxy.close());

  it('that node degrades alone; its failed wake-ups and withdrawals are sent when it is back', async () => {
    const a = await node('a', { url: `redis://127.0.0.1:${proxy.port}` });
    const b = await node('b');
    const who = 'did:key:z6MkBob';
    const got: (number | undefined)[] = [];
    await b.wakeUps.subscribe(who, (seq) => got.push(seq));
    await a.presence.announce('did:key:z6MkGone', a.nodeId, 60_000);
    expect(await b.presence.nodesOf('did:key:z6MkGone')).toEqual([a.nodeId]);
    const aDegraded = next((h) => a.onHealth(h));

    proxy.cut();
    await within('a degraded', 5000, aDegraded);
    expect(b.health()).toBe('ok');
    await expect(a.nonces.useOnce('n', Date.now() + 300_000, { key: 'signer' })).rejects.toBeInstanceOf(
      NonceCacheUnavailableError,
    );
    expect(await b.nonces.useOnce('n', Date.now() + 300_000, { key: 'signer' })).toBe(true); // b still checks replays
    expect(await a.wakeUps.publish(who, 7)).toBe(0); // kept for later
    await a.presence.withdraw('did:key:z6MkGone', a.nodeId); // kept for later
    await a.presence.announce('did:key:z6MkCame', a.nodeId, 60_000); // kept for later
    expect(got).toEqual([]);

    const aBack = next((h) => a.wakeUps.onReconnect(h));
    proxy.restore();
    await within('a to reconnect', 10_000, aBack);
    await until('the wake-up sent while cut off', () => got.includes(7));
    await until(
      'the withdrawal sent while cut off',
      async () => (await b.presence.nodesOf('did:key:z6MkGone')).length === 0,
    );
    await until('the announce made while cut off', async () =>
      (await b.presence.nodesOf('did:key:z6MkCame')).includes(a.nodeId),
    );
    await until('a healthy', () => a.health() === 'ok');
  });
});

describe('a hung Redis (SIGSTOP)', () => {
  it('fails commands within the timeout, typed, and recovers when it answers again', async () => {
    const a = await node('a');
    const limiter = a.rateLimiter('requests', { perSecond: SLOW, burst: 1 });
    const pid = server.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      await expect(a.nonces.useOnce('n', Date.now() + 300_000, { key: 'signer' })).rejects.toBeInstanceOf(
        NonceCacheUnavailableError,
      );
      expect(Date.now() - started).toBeLessThan(3000);
      await until('a degraded', () => a.health() === 'degraded');
      // Degraded: limits answer at once, locally.
      expect(await within('a local take', 200, Promise.resolve(limiter.take('k')))).toBe(true);
      expect(await within('a local take', 200, Promise.resolve(limiter.take('k')))).toBe(false);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await until('a healthy again', () => a.health() === 'ok');
    expect(await a.nonces.useOnce('n2', Date.now() + 300_000, { key: 'signer' })).toBe(true);
  });
});

describe('a hung Redis (SIGSTOP) under an idle relay (issue 23 item 9)', () => {
  it('says degraded on /health within a few seconds with nothing else asked of Redis, and ok once it answers', async () => {
    // The relay's defaults: a 1 s command deadline and a 1 s ping.
    const a = await node('idle', { commandTimeoutMs: 1000, pingIntervalMs: 1000 });
    const relay = createRelay({ coordination: a });
    const { url } = await relay.listen();
    const coordination = async () => (await (await fetch(`${url}/health`)).json()).coordination;
    try {
      expect(await coordination()).toBe('ok');
      const pid = server.pid!;
      process.kill(pid, 'SIGSTOP');
      try {
        await until('/health to say degraded', async () => (await coordination()) === 'degraded', 5000);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await until('/health to say ok again', async () => (await coordination()) === 'ok', 5000);
    } finally {
      await relay.close();
    }
  });
});

describe('a full Redis (maxmemory, noeviction)', () => {
  let full: RedisServer;
  beforeAll(async () => {
    full = await startRedis({ name: 'full', settings: { maxmemory: '4mb', 'maxmemory-policy': 'noeviction' } });
  });
  afterAll(() => full?.destroy());

  it('refuses new nonces as full, not as an outage, and limits per node', async () => {
    const c = await node('a', { url: full.url });
    const raw = createClient({ url: full.url });
    raw.on('error', () => {});
    await raw.connect();
    try {
      // Big values until refused (the command being read counts), then small ones: over the limit.
      let i = 0;
      for (const size of [256 * 1024, 1024, 64]) {
        const blob = 'x'.repeat(size);
        await until(`a ${size}-byte write to be refused`, async () => {
          try {
            await raw.set(`filler:${i++}`, blob);
            return false;
          } catch (error) {
            return /OOM/.test(String(error));
          }
        });
      }
      const error = await rejection(c.nonces.useOnce('n', Date.now() + 300_000, { key: 'signer' }));
      expect(error).toBeInstanceOf(NonceCacheFullError);
      expect(isCoordinationUnavailable(error)).toBe(false);
      expect(await c.rateLimiter('requests', { perSecond: SLOW, burst: 1 }).take('k')).toBe(true);
      expect(c.fallbacks).toBe(1);
      expect(c.health()).toBe('ok'); // it answers: full is not down
    } finally {
      raw.destroy();
    }
  });
});

describe('starting', () => {
  it('without Redis: rejects with CoordinationUnavailableError after waitForReady', async () => {
    await server.stop();
    const started = Date.now();
    const error = await rejection(node('a', { waitForReady: 300 }));
    expect(error).toBeInstanceOf(CoordinationUnavailableError);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses a URL that is not redis:// or rediss://, without repeating it', async () => {
    for (const url of ['http://user:secret@127.0.0.1:1', 'not a url']) {
      const error = await rejection(connectRedisCoordination({ url, nodeId: 'a' }));
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).not.toMatch(/secret/);
    }
  });

  it('with waitForReady false: starts degraded, catches up when Redis comes, and reports it', async () => {
    await server.stop();
    const a = await node('a', { waitForReady: false });
    expect(a.health()).toBe('degraded');
    await a.presence.announce('did:key:z6MkEarly', a.nodeId, 60_000);
    const subscribed = await a.wakeUps.subscribe('did:key:z6MkEarly', () => {});
    expect(subscribed).toBeTypeOf('function');
    const up = next((h) => a.wakeUps.onReconnect(h));
    await server.restart();
    await within('the first connect to be reported', 10_000, up);
    await until('a healthy', () => a.health() === 'ok');
    const b = await node('b');
    expect(await b.presence.nodesOf('did:key:z6MkEarly')).toEqual([a.nodeId]);
    expect(await b.wakeUps.publish('did:key:z6MkEarly', 1)).toBe(1);
  });
});
