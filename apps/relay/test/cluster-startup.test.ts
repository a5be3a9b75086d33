// A cluster node that cannot use a setting at start (issue 14): exit 2 with a message naming the
// setting, and never repeating the URL (it may hold a password) or the key.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../test-support/services/index.js';
import { runRelay } from './fixtures/relay-process.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-cluster-start-'));
const keyFile = join(dir, 'relay.key');
let redis: RedisServer;
beforeAll(async () => {
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const SECRET = 'pa55-w0rd-xyz';
const node = (databaseUrl: string, redisUrl: string, key = keyFile) =>
  runRelay(['--database-url', databaseUrl, '--redis-url', redisUrl, '--relay-key-file', key, '--port', '0']);

describe('a cluster node that cannot start', { timeout: 60_000 }, () => {
  it('exits 2 naming --database-url when PostgreSQL is unreachable', async () => {
    const run = await node(`postgres://wmp:${SECRET}@127.0.0.1:1/relay`, redis.url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('wmp-relay: --database-url: database unreachable');
    expect(run.stderr).not.toContain(SECRET);
    expect(run.stdout).toBe('');
  });

  it('exits 2 naming --redis-url when Redis does not answer', async () => {
    const run = await node('postgres://wmp@127.0.0.1:1/relay', `redis://:${SECRET}@127.0.0.1:1`);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('wmp-relay: --redis-url: Redis did not answer');
    expect(run.stderr).not.toContain(SECRET);
  });

  it('exits 2 naming --relay-key-file for a missing, malformed or readable-by-others key', async () => {
    const malformed = join(dir, 'bad.key');
    writeFileSync(malformed, 'not a key\n', { mode: 0o600 });
    const open = join(dir, 'open.key');
    writeFileSync(open, `${randomBytes(32).toString('hex')}\n`, { mode: 0o644 });
    for (const [key, why] of [
      [join(dir, 'missing.key'), 'cannot read'],
      [malformed, 'not a relay key'],
      [open, 'chmod 600'],
    ] as const) {
      const run = await node('postgres://wmp@127.0.0.1:1/relay', redis.url, key);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('wmp-relay: --relay-key-file:');
      expect(run.stderr).toContain(why);
    }
  });
});
