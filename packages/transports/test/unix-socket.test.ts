import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LineTooLongError } from '../src/index.js';
import {
  connectUnixSocket,
  defaultSocketPath,
  listenUnixSocket,
  UnixSocketError,
  type UnixSocketServer,
  type UnixSocketTransport,
} from '../src/node.js';

let base: string;
const servers: UnixSocketServer[] = [];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'wmp-us-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await rm(base, { recursive: true, force: true });
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

function watch(t: UnixSocketTransport) {
  const seen = { frames: [] as (string | Uint8Array)[], errors: [] as Error[], closes: 0 };
  t.onmessage = (f) => seen.frames.push(f);
  t.onerror = (e) => seen.errors.push(e);
  t.onclose = () => seen.closes++;
  return seen;
}

/** A server whose transports echo every frame back as `{"echo": <frame>}`. */
async function echoServer(path: string, extra: { maxConnections?: number; maxLineBytes?: number } = {}) {
  const accepted: UnixSocketTransport[] = [];
  const errors: Error[] = [];
  const server = await listenUnixSocket({
    path,
    ...extra,
    onerror: (e) => errors.push(e),
    onTransport: (t) => {
      accepted.push(t);
      t.onmessage = (f) => void t.send({ jsonrpc: '2.0', method: 'echo', params: { frame: f as string } });
      t.onerror = (e) => errors.push(e);
      void t.start();
    },
  });
  servers.push(server);
  return { server, accepted, errors };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('listenUnixSocket / connectUnixSocket', () => {
  it('creates the socket directory with mode 0700 and exchanges NDJSON both ways', async () => {
    const path = join(base, 'run', 'wmp', 'app.sock');
    const { server, accepted } = await echoServer(path);
    expect(server.path).toBe(path);
    expect(await mode(join(base, 'run', 'wmp'))).toBe(0o700);
    expect(await mode(join(base, 'run'))).toBe(0o700);
    expect((await lstat(path)).isSocket()).toBe(true);
    expect(await mode(path)).toBe(0o600);

    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    await client.send({ jsonrpc: '2.0', id: 1, method: 'wmp.ping', params: { s: '\u00e9\u{1f600}' } });
    await vi.waitFor(() => expect(seen.frames).toHaveLength(1));
    expect(JSON.parse(seen.frames[0] as string)).toEqual({
      jsonrpc: '2.0',
      method: 'echo',
      params: { frame: '{"jsonrpc":"2.0","id":1,"method":"wmp.ping","params":{"s":"\u00e9\u{1f600}"}}' },
    });
    expect(accepted).toHaveLength(1);
    expect(server.connections).toBe(1);

    const serverSide = watch(accepted[0]!);
    await client.close();
    expect(seen.closes).toBe(1);
    await vi.waitFor(() => expect(serverSide.closes).toBe(1));
    await vi.waitFor(() => expect(server.connections).toBe(0));
  });

  it('repairs a socket directory of ours that others can read', async () => {
    const dir = join(base, 'wmp');
    await mkdir(dir);
    await chmod(dir, 0o755);
    await echoServer(join(dir, 'app.sock'));
    expect(await mode(dir)).toBe(0o700);
  });

  it('refuses a parent directory with mode 0777, creating nothing in it', async () => {
    const open = join(base, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const error = await rejection(listenUnixSocket({ path: join(open, 'wmp', 'app.sock'), onTransport: () => {} }));
    expect(error).toBeInstanceOf(UnixSocketError);
    expect(error).toMatchObject({ code: 'ERR_INSECURE_DIRECTORY', path: open });
    expect(existsSync(join(open, 'wmp'))).toBe(false);
  });

  it('refuses any world-writable ancestor, not only the nearest', async () => {
    const open = join(base, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const error = await rejection(
      listenUnixSocket({ path: join(open, 'a', 'b', 'wmp', 'app.sock'), onTransport: () => {} }),
    );
    expect(error).toMatchObject({ code: 'ERR_INSECURE_DIRECTORY', path: open });
    expect(existsSync(join(open, 'a'))).toBe(false);
  });

  it('accepts a world-writable ancestor with the sticky bit (like /tmp)', async () => {
    const shared = join(base, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    await echoServer(join(shared, 'wmp', 'app.sock'));
    expect(await mode(join(shared, 'wmp'))).toBe(0o700);
  });

  it('refuses a world-writable socket directory instead of repairing it', async () => {
    const open = join(base, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const error = await rejection(listenUnixSocket({ path: join(open, 'app.sock'), onTransport: () => {} }));
    expect(error).toMatchObject({ code: 'ERR_INSECURE_DIRECTORY', path: open });
    expect(await mode(open)).toBe(0o777);
    expect(existsSync(join(open, 'app.sock'))).toBe(false);
  });

  it('refuses a socket directory that is a symlink', async () => {
    const real = join(base, 'real');
    await mkdir(real, { mode: 0o700 });
    await symlink(real, join(base, 'link'));
    const error = await rejection(listenUnixSocket({ path: join(base, 'link', 'app.sock'), onTransport: () => {} }));
    expect(error).toMatchObject({ code: 'ERR_INSECURE_DIRECTORY' });
  });

  it('removes a stale socket file left by a server that was killed', async () => {
    const dir = join(base, 'wmp');
    await mkdir(dir, { mode: 0o700 });
    const path = join(dir, 'app.sock');
    const child = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.stdout.write('ready'))`,
    ]);
    await once(child.stdout, 'data');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect((await lstat(path)).isSocket()).toBe(true);

    await echoServer(path);
    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    await client.send({ jsonrpc: '2.0', method: 'x' });
    await vi.waitFor(() => expect(seen.frames).toHaveLength(1));
    await client.close();
  });

  it('never removes a live server\u2019s socket', async () => {
    const path = join(base, 'wmp', 'app.sock');
    await echoServer(path);
    const error = await rejection(listenUnixSocket({ path, onTransport: () => {} }));
    expect(error).toMatchObject({ code: 'ERR_ADDRESS_IN_USE' });
    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    await client.send({ jsonrpc: '2.0', method: 'x' });
    await vi.waitFor(() => expect(seen.frames).toHaveLength(1));
    await client.close();
  });

  it('never removes a file that is not a socket', async () => {
    const dir = join(base, 'wmp');
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, 'app.sock'), 'keep me');
    const error = await rejection(listenUnixSocket({ path: join(dir, 'app.sock'), onTransport: () => {} }));
    expect(error).toMatchObject({ code: 'ERR_NOT_A_SOCKET' });
    expect(await readFile(join(dir, 'app.sock'), 'utf8')).toBe('keep me');
  });

  it('refuses a path longer than sun_path', async () => {
    const error = await rejection(
      listenUnixSocket({ path: join(base, 'x'.repeat(120), 'a.sock'), onTransport: () => {} }),
    );
    expect(error).toMatchObject({ code: 'ERR_PATH_TOO_LONG' });
  });

  it('bounds concurrent connections and accepts again once one closes', async () => {
    const path = join(base, 'wmp', 'app.sock');
    const { server, errors } = await echoServer(path, { maxConnections: 2 });
    const a = await connectUnixSocket(path);
    const b = await connectUnixSocket(path);
    await vi.waitFor(() => expect(server.connections).toBe(2));
    const c = await connectUnixSocket(path);
    const cSeen = watch(c);
    await c.start();
    await vi.waitFor(() => expect(cSeen.closes).toBe(1));
    expect(errors.map((e) => (e as UnixSocketError).code)).toEqual(['ERR_TOO_MANY_CONNECTIONS']);
    expect(server.connections).toBe(2);

    await a.close();
    await vi.waitFor(() => expect(server.connections).toBe(1));
    const d = await connectUnixSocket(path);
    const dSeen = watch(d);
    await d.start();
    await d.send({ jsonrpc: '2.0', method: 'x' });
    await vi.waitFor(() => expect(dSeen.frames).toHaveLength(1));
    await Promise.all([b.close(), d.close()]);
  });

  it('defaults to 64 concurrent connections', async () => {
    const path = join(base, 'wmp', 'app.sock');
    const { server, errors } = await echoServer(path);
    const clients = await Promise.all(Array.from({ length: 65 }, () => connectUnixSocket(path)));
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(server.connections).toBe(64);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('reports an over-long line on a connection and keeps it open', async () => {
    const path = join(base, 'wmp', 'app.sock');
    const { errors } = await echoServer(path, { maxLineBytes: 64 });
    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    client.socket.write('x'.repeat(200) + '\n{"ok":true}\n');
    await vi.waitFor(() => expect(seen.frames).toHaveLength(1));
    expect(JSON.parse(seen.frames[0] as string).params.frame).toBe('{"ok":true}');
    expect(errors.map((e) => e.constructor)).toEqual([LineTooLongError]);
    await client.close();
  });

  it('closes every connection and removes the socket file on close', async () => {
    const path = join(base, 'wmp', 'app.sock');
    const { server } = await echoServer(path);
    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    await vi.waitFor(() => expect(server.connections).toBe(1));
    await server.close();
    await vi.waitFor(() => expect(seen.closes).toBe(1));
    expect(existsSync(path)).toBe(false);
    await expect(connectUnixSocket(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports a throwing onTransport and drops that connection', async () => {
    const path = join(base, 'wmp', 'app.sock');
    const errors: Error[] = [];
    servers.push(
      await listenUnixSocket({
        path,
        onerror: (e) => errors.push(e),
        onTransport: () => {
          throw new Error('no thanks');
        },
      }),
    );
    const client = await connectUnixSocket(path);
    const seen = watch(client);
    await client.start();
    await vi.waitFor(() => expect(seen.closes).toBe(1));
    expect(errors.map((e) => e.message)).toEqual(['no thanks']);
  });
});

describe('defaultSocketPath', () => {
  it('uses $XDG_RUNTIME_DIR/wmp on Linux', () => {
    expect(defaultSocketPath('wallet', { platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1000' } })).toBe(
      '/run/user/1000/wmp/wallet.sock',
    );
  });

  it('uses ~/Library/Application Support/wmp on macOS', () => {
    expect(defaultSocketPath('wallet', { platform: 'darwin', env: {}, homedir: '/Users/ann' })).toBe(
      '/Users/ann/Library/Application Support/wmp/wallet.sock',
    );
  });

  it('refuses to guess without XDG_RUNTIME_DIR, and on Windows', () => {
    expect(() => defaultSocketPath('wallet', { platform: 'linux', env: {} })).toThrow(
      expect.objectContaining({ code: 'ERR_NO_RUNTIME_DIR' }),
    );
    expect(() => defaultSocketPath('wallet', { platform: 'linux', env: { XDG_RUNTIME_DIR: 'rel' } })).toThrow(
      UnixSocketError,
    );
    expect(() => defaultSocketPath('wallet', { platform: 'win32' })).toThrow(
      expect.objectContaining({ code: 'ERR_UNSUPPORTED_PLATFORM' }),
    );
  });

  it.each(['', '..', '../x', 'a/b', '.hidden', 'a b', 'x'.repeat(65)])('refuses the app name %j', (app) => {
    expect(() => defaultSocketPath(app, { platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1' } })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_APP_NAME' }),
    );
  });
});
