import { existsSync } from 'node:fs';
import { createClient } from '@redis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive, pingRedis, type RedisServer, ServiceBinaryMissingError, startRedis } from './index.js';

describe('startRedis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ name: 'harness' });
  });
  afterAll(() => server?.destroy());

  it('answers at its url on 127.0.0.1, with persistence off', async () => {
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(server.version).toMatch(/^7\./);
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.configGet('save')).toEqual({ save: '' });
      expect(await client.configGet('appendonly')).toEqual({ appendonly: 'no' });
      expect(await client.configGet('bind')).toEqual({ bind: '127.0.0.1' });
    } finally {
      client.destroy();
    }
  });

  it('kill() is a SIGKILL: the data is gone after restart() on the same port', async () => {
    const client = createClient({ url: server.url, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    await client.connect();
    await client.set('k', 'v');
    const pid = server.pid!;
    await server.kill();
    expect(server.running).toBe(false);
    expect(isProcessAlive(pid)).toBe(false);
    expect(await pingRedis(server.port)).toBe(false);
    await server.restart();
    expect(server.pid).not.toBe(pid);
    const again = createClient({ url: server.url });
    await again.connect();
    expect(await again.get('k')).toBeNull();
    again.destroy();
  });

  it('stop() shuts down cleanly; restart() brings it back', async () => {
    await server.stop();
    expect(server.running).toBe(false);
    expect(await pingRedis(server.port)).toBe(false);
    await server.restart();
    expect(await pingRedis(server.port)).toBe(true);
    await server.restart(); // restart while running: stop, then start
    expect(await pingRedis(server.port)).toBe(true);
  });

  it('destroy() removes its directory; restart() afterwards is an error', async () => {
    const other = await startRedis({ name: 'destroyed' });
    await other.destroy();
    expect(existsSync(other.baseDir)).toBe(false);
    await expect(other.restart()).rejects.toThrow(/after destroy/);
  });
});

describe('without Redis installed', () => {
  it('fails with ServiceBinaryMissingError naming the Debian package', async () => {
    const error = await startRedis({ binary: '/nonexistent/redis-server' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceBinaryMissingError);
    expect((error as ServiceBinaryMissingError).debianPackage).toBe('redis-server');
    expect((error as Error).message).toContain('apt-get install -y redis-server');
  });
});
