// What the relay will use of node-redis (@redis/client 6, RESP3), checked against the Redis the
// Debian package ships (7.0.15; node-redis officially supports >= 7.2). docs/decisions.md has why.
import { type CommandParser, createClient, defineScript } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait-for.js';
import { type RedisServer, startRedis } from './index.js';

// A token-bucket-like step: INCR a counter and (re)arm its expiry in one round trip.
const BUMP = "local n = redis.call('INCR', KEYS[1]); redis.call('PEXPIRE', KEYS[1], ARGV[1]); return n";
const bump = defineScript({
  SCRIPT: BUMP,
  NUMBER_OF_KEYS: 1,
  parseCommand(parser: CommandParser, key: string, ttlMs: number) {
    parser.pushKey(key);
    parser.push(String(ttlMs));
  },
  transformReply: (reply: unknown) => reply as number,
});

let server: RedisServer;
const clients: { destroy(): void }[] = [];

function client() {
  const c = createClient({ url: server.url, scripts: { bump }, socket: { reconnectStrategy: () => 20 } });
  c.on('error', () => {}); // connection drops are expected here; without a listener node-redis throws
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startRedis({ name: 'client' });
});
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
});
afterAll(() => server?.destroy());

describe('node-redis on Redis 7.0', () => {
  it('speaks RESP3', async () => {
    const c = client();
    await c.connect();
    expect(String(await c.sendCommand(['CLIENT', 'INFO']))).toMatch(/\bresp=3\b/);
  });

  it('runs a Lua script with EVAL and EVALSHA, and defineScript survives a restart (NOSCRIPT -> EVAL)', async () => {
    const c = client();
    await c.connect();
    expect(await c.eval(BUMP, { keys: ['bucket'], arguments: ['60000'] })).toBe(1);
    const sha = await c.scriptLoad(BUMP);
    expect(sha).toBe(bump.SHA1);
    expect(await c.evalSha(sha, { keys: ['bucket'], arguments: ['60000'] })).toBe(2);
    expect(await c.pTTL('bucket')).toBeGreaterThan(59_000);
    expect(await c.bump('bucket', 60_000)).toBe(3);

    await server.kill();
    await server.restart(); // the script cache is empty now
    await waitFor(async () => (await c.ping().catch(() => '')) === 'PONG', 10_000, 'the client to reconnect');
    await expect(c.evalSha(sha, { keys: ['bucket'], arguments: ['1'] })).rejects.toThrow(/NOSCRIPT/);
    expect(await c.bump('bucket', 60_000)).toBe(1); // defineScript retried with EVAL
  });

  it('SET with PX and NX sets once and expires', async () => {
    const c = client();
    await c.connect();
    expect(await c.set('lock', 'a', { condition: 'NX', expiration: { type: 'PX', value: 200 } })).toBe('OK');
    expect(await c.set('lock', 'b', { condition: 'NX', expiration: { type: 'PX', value: 200 } })).toBeNull();
    expect(await c.get('lock')).toBe('a');
    const ttl = await c.pTTL('lock');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(200);
    await waitFor(async () => (await c.get('lock')) === null, 10_000, 'the lock to expire');
    expect(await c.set('lock', 'c', { condition: 'NX', expiration: { type: 'PX', value: 200 } })).toBe('OK');
  });

  it('delivers SPUBLISH to SSUBSCRIBE (sharded pub/sub)', async () => {
    const pub = client();
    const sub = client();
    await Promise.all([pub.connect(), sub.connect()]);
    const got: [string, string][] = [];
    await sub.sSubscribe(['wake:{a}', 'wake:{b}'], (message, channel) => got.push([channel, message]));
    expect(await pub.sPublish('wake:{a}', 'one')).toBe(1);
    expect(await pub.sPublish('wake:{b}', 'two')).toBe(1);
    expect(await pub.sPublish('wake:{c}', 'nobody')).toBe(0);
    await waitFor(() => got.length === 2, 10_000, 'both messages');
    expect(got).toEqual([
      ['wake:{a}', 'one'],
      ['wake:{b}', 'two'],
    ]);
    await sub.sUnsubscribe('wake:{a}');
    expect(await pub.sPublish('wake:{a}', 'gone')).toBe(0);
  });

  it('reconnects after SIGKILL + restart, resubscribes, and runs commands sent during the outage', async () => {
    const pub = client();
    const sub = client();
    await Promise.all([pub.connect(), sub.connect()]);
    const got: string[] = [];
    await sub.sSubscribe('wake:{r}', (message) => got.push(message));
    let reconnects = 0;
    sub.on('ready', () => reconnects++);

    await server.kill();
    const duringOutage = pub.set('written', 'while down'); // queued until the client is back
    await server.restart();

    expect(await duringOutage).toBe('OK');
    // The subscription is restored by the client itself: publish until it arrives.
    await waitFor(
      async () => {
        await pub.sPublish('wake:{r}', 'after restart');
        return got.includes('after restart');
      },
      10_000,
      'the resubscribed channel to deliver',
    );
    expect(reconnects).toBeGreaterThanOrEqual(1);
    expect(await pub.get('written')).toBe('while down');
  });
});
