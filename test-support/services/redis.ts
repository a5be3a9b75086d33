// A throwaway Redis server for tests, from the Debian package `redis-server` (7.0 on Debian 12):
// `redis-server --port N --bind 127.0.0.1 --save "" --appendonly no`, nothing on disk. Ready when
// it answers PING (polled over a socket), never after a sleep. Runs as whoever runs the tests.
//
//   const redis = await startRedis();
//   await redis.kill();      // SIGKILL: every key is gone, clients see the connection drop
//   await redis.restart();   // the same port again, empty
//   await redis.destroy();
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  type CleanupHandle,
  freePort,
  pollUntil,
  registerCleanup,
  removeDir,
  ServiceBinaryMissingError,
  ServiceStartError,
  shellQuote,
} from './common.js';

export interface RedisOptions {
  /** Shows in the temp dir's name; default `test`. */
  readonly name?: string;
  /** The redis-server program; default `$WMP_REDIS_SERVER`, else `redis-server` on PATH. */
  readonly binary?: string;
  /** Where the temp dir goes; default `os.tmpdir()`. */
  readonly parentDir?: string;
  /** Extra `--key value` settings, e.g. `{ maxmemory: '64mb' }`. */
  readonly settings?: Readonly<Record<string, string>>;
  /** How long to wait for PONG; default 30 s. */
  readonly timeoutMs?: number;
}

export interface RedisServer {
  readonly name: string;
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Server version, e.g. `7.0.15`. */
  readonly version: string;
  readonly running: boolean;
  /** The server's pid while running. */
  readonly pid: number | undefined;
  /** The server's temp dir (its working directory; nothing is written there). */
  readonly baseDir: string;
  /** SIGKILL, then waits for the process to exit (all data is lost: persistence is off). */
  kill(): Promise<void>;
  /** Starts the server again on the same port (stopping it first if it runs). */
  restart(): Promise<void>;
  /** SIGTERM (a clean shutdown) and waits for the exit. */
  stop(): Promise<void>;
  /** What the server printed so far. */
  output(): string;
  /** Stops the server and removes its temp dir; it cannot be restarted. */
  destroy(): Promise<void>;
}

const DEBIAN_PACKAGE = 'redis-server';

/** Finds redis-server, or throws ServiceBinaryMissingError naming the Debian package. */
export function redisBinary(explicit?: string): string {
  const chosen = explicit ?? process.env.WMP_REDIS_SERVER;
  if (chosen) {
    if (!existsSync(chosen)) throw new ServiceBinaryMissingError('redis', chosen, DEBIAN_PACKAGE);
    return chosen;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  }
  if (existsSync('/usr/bin/redis-server')) return '/usr/bin/redis-server';
  throw new ServiceBinaryMissingError('redis', 'redis-server', DEBIAN_PACKAGE, 'not on PATH; or set WMP_REDIS_SERVER');
}

/** Sends one inline PING; resolves true on +PONG, false on refusal or a not-ready answer. */
export function pingRedis(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG')); // -LOADING etc.: not yet
    });
  });
}

/** Starts a throwaway Redis server; a few milliseconds. */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const binary = redisBinary(options.binary);
  const name = (options.name ?? 'test').replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24) || 'test';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const version = /v=(\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  const baseDir = await mkdtemp(join(options.parentDir ?? tmpdir(), `wmp-redis-${name}-`));
  const pidFile = join(baseDir, 'redis.pid');

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';
  let destroyed = false;
  let port = 0;

  const handle: CleanupHandle = registerCleanup(
    `if [ -f ${shellQuote(pidFile)} ]; then kill -9 "$(cat ${shellQuote(pidFile)})" 2>/dev/null; fi; rm -rf ${shellQuote(baseDir)}`,
    () => {
      child?.kill('SIGKILL');
      removeDir(baseDir);
    },
  );

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--dir', baseDir, '--daemonize', 'no', '--logfile', '');
    for (const [key, value] of Object.entries(options.settings ?? {})) args.push(`--${key}`, value);
    const proc = spawn(binary, args, { cwd: baseDir, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let gone = false;
    let failure: Error | undefined;
    exited = new Promise<void>((resolve) => {
      proc.once('exit', () => {
        gone = true;
        rmSync(pidFile, { force: true });
        if (child === proc) child = undefined;
        resolve();
      });
      proc.once('error', (e) => {
        gone = true;
        failure = e;
        if (child === proc) child = undefined;
        resolve();
      });
    });
    const collect = (chunk: Buffer) => {
      out = (out + chunk.toString('utf8')).slice(-64_000);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    // Nothing of the server keeps this process alive: a forgotten server dies with it (watchdog).
    proc.unref();
    (proc.stdout as unknown as { unref?: () => void } | null)?.unref?.();
    (proc.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    if (proc.pid !== undefined) writeFileSync(pidFile, String(proc.pid));

    await pollUntil(
      `redis-server on port ${port} to answer PING`,
      async () => {
        if (gone) return false;
        return (await pingRedis(port)) ? true : undefined;
      },
      { timeoutMs },
    ).catch(async (e: Error) => {
      proc.kill('SIGKILL');
      await exited;
      throw new ServiceStartError('redis', e.message, out);
    });
    if (gone) {
      if (failure && (failure as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ServiceBinaryMissingError('redis', binary, DEBIAN_PACKAGE);
      }
      throw new ServiceStartError(
        'redis',
        `redis-server exited during start${failure ? `: ${failure.message}` : ''}`,
        out,
      );
    }
  };

  const killNow = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc) return;
    proc.ref(); // awaiting its exit must keep this process alive
    proc.kill(signal);
    await exited;
  };

  try {
    // A free port can be taken between freePort() and the bind: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      out = '';
      try {
        await launch();
        break;
      } catch (e) {
        if (attempt >= 3 || !(e instanceof ServiceStartError) || !/Address already in use/i.test(out)) throw e;
      }
    }
  } catch (e) {
    handle.release();
    throw e;
  }

  return {
    name,
    url: `redis://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    version,
    get running() {
      return child !== undefined;
    },
    get pid() {
      return child?.pid;
    },
    baseDir,
    kill: () => killNow('SIGKILL'),
    async restart() {
      if (destroyed) throw new ServiceStartError('redis', 'restart() after destroy()');
      await killNow('SIGTERM');
      await launch();
    },
    stop: () => killNow('SIGTERM'),
    output: () => out,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await killNow('SIGKILL');
      handle.release();
    },
  };
}
