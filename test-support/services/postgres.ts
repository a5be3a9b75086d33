// A throwaway PostgreSQL server for tests, from the Debian package `postgresql` (15):
// initdb into a temp dir, pg_ctl on a free 127.0.0.1 port with fsync on, the socket in the same
// dir. As root, initdb and postgres run as the `postgres` user (they refuse root); as any other
// user they run as that user. Readiness is `pg_ctl -w` (it polls the server), never a sleep.
//
//   const pg = await startPostgres({ name: 'queue' });
//   const url = await pg.createDatabase('orders');   // a fresh, empty database on that server
//   await pg.stop({ mode: 'immediate' });           // a crash: recovery runs at the next start
//   await pg.start();
//   await pg.destroy();                             // stop and remove everything
import { readFileSync, rmSync } from 'node:fs';
import { chmod, chown, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  aliveTree,
  type CleanupHandle,
  freePort,
  isProcessAlive,
  pollUntil,
  registerCleanup,
  removeDir,
  ServiceBinaryMissingError,
  ServiceStartError,
  shellQuote,
} from './common.js';
import {
  DEBIAN_PACKAGE,
  postgresBinDir,
  type RunResult,
  runTool,
  type ServerUser,
  serverUser,
} from './postgres-binaries.js';
import { createDatabase, safeName } from './postgres-database.js';

/** Sends `name` to `pid` if it still exists. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

export type PostgresStopMode = 'smart' | 'fast' | 'immediate';

export interface PostgresOptions {
  /** Shows in the temp dir's name and as `cluster_name` in `ps`; default `test`. */
  readonly name?: string;
  /** The directory of initdb/pg_ctl; default `$WMP_PG_BINDIR`, else `/usr/lib/postgresql/15/bin`, else the newest installed. */
  readonly binDir?: string;
  /** Where the temp dir goes; default `os.tmpdir()`. As root it must be reachable by `postgres`. */
  readonly parentDir?: string;
  /** Extra server settings (`-c key=value`), e.g. `{ max_connections: '200' }`. */
  readonly settings?: Readonly<Record<string, string>>;
  /** For `pg_ctl -w -t` (start and stop), in seconds; default 60. */
  readonly timeoutSeconds?: number;
}

export interface PostgresServer {
  readonly name: string;
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust auth, no password). */
  readonly url: string;
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Major version of the server, e.g. 15. */
  readonly version: number;
  /** The cluster's data directory (PGDATA). */
  readonly dataDir: string;
  /** Holds the Unix socket (`-k`), the log and the data directory. */
  readonly baseDir: string;
  readonly running: boolean;
  /** The postmaster's pid while running (also its process group: every backend is in it). */
  readonly pid: number | undefined;
  /** Creates a fresh database and returns its URL; `name` is a prefix (a unique suffix is added). */
  createDatabase(name?: string): Promise<string>;
  /** Starts the server again (same port, same data) after stop() or kill(); no-op if running. */
  start(): Promise<void>;
  /** `pg_ctl stop -m <mode>` (default fast) and waits; `immediate` is a crash (WAL recovery on start). */
  stop(options?: { mode?: PostgresStopMode }): Promise<void>;
  /** SIGKILL to the postmaster and every backend (its process group), then waits for them to be gone. */
  kill(): Promise<void>;
  /** The server log so far (for failure messages). */
  log(): string;
  /** Stops (immediate) and removes the temp dir; the server cannot be started again. */
  destroy(): Promise<void>;
}

/** Starts a throwaway PostgreSQL server (initdb + pg_ctl start -w); about 1.5 s. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const binDir = postgresBinDir(options.binDir);
  const name = safeName(options.name ?? 'test', 'test');
  const timeoutSeconds = options.timeoutSeconds ?? 60;
  const timeoutMs = (timeoutSeconds + 10) * 1000;
  const baseDir = await mkdtemp(join(options.parentDir ?? tmpdir(), `wmp-pg-${name}-`));
  const dataDir = join(baseDir, 'data');
  const logFile = join(baseDir, 'postgres.log');
  const pidFile = join(dataDir, 'postmaster.pid');

  let user: ServerUser | undefined;
  let handle: CleanupHandle | undefined;
  let running = false;
  let destroyed = false;
  let port = 0;

  const readPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const log = (): string => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  /** Runs a PostgreSQL program, as `postgres` when we are root. */
  const pgRun = async (tool: string, args: readonly string[]): Promise<RunResult> => {
    const file = join(binDir, tool);
    try {
      return user
        ? await runTool('runuser', ['-u', 'postgres', '--', file, ...args], baseDir, timeoutMs)
        : await runTool(file, args, baseDir, timeoutMs);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw user
          ? new ServiceBinaryMissingError('postgres', 'runuser', 'util-linux', 'needed to run postgres as root')
          : new ServiceBinaryMissingError('postgres', file, DEBIAN_PACKAGE);
      }
      throw e;
    }
  };
  const serverArgs = (): string => {
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      fsync: 'on',
      // After a crash, one syncfs() of the data directory's file system instead of an fsync per
      // file (a start after a crash: 2.9 s -> 0.3-0.9 s here); durability is the same.
      recovery_init_sync_method: 'syncfs',
      cluster_name: `wmp-${name}`,
      ...options.settings,
    };
    const words = ['-p', String(port), '-k', baseDir];
    for (const [key, value] of Object.entries(settings)) words.push('-c', `${key}=${value}`);
    return words.map(shellQuote).join(' '); // pg_ctl hands -o to /bin/sh
  };
  const pgCtlStart = (): Promise<RunResult> =>
    pgRun('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', serverArgs(), '-w', '-t', String(timeoutSeconds), 'start']);

  const killGroup = async (): Promise<void> => {
    const pid = readPid();
    if (pid !== undefined) {
      // Backends are not in the postmaster's process group (each calls setsid()), so the tree is
      // found by parent pid while the postmaster is stopped and cannot fork another child.
      signal(pid, 'SIGSTOP');
      const tree = aliveTree(pid);
      for (const member of tree) signal(member, 'SIGKILL');
      await pollUntil(
        `postgres processes ${tree.join(', ')} to exit`,
        () => (tree.some(isProcessAlive) ? undefined : true),
        {
          timeoutMs: 10_000,
        },
      );
      // A crashed postmaster leaves its lock files; its pid may live on as a zombie (nobody reaps
      // orphans here), which would make the next postmaster think the old one still runs.
      rmSync(pidFile, { force: true });
      rmSync(join(baseDir, `.s.PGSQL.${port}.lock`), { force: true });
    }
    running = false;
  };

  try {
    user = await serverUser(baseDir);
    if (user) {
      await chmod(baseDir, 0o700);
      await chown(baseDir, user.uid, user.gid);
    }
    handle = registerCleanup(
      `if [ -f ${shellQuote(pidFile)} ]; then p="$(head -n 1 ${shellQuote(pidFile)})"; kill -STOP "$p"; kill -9 "$p" $(pgrep -P "$p"); fi 2>/dev/null; rm -rf ${shellQuote(baseDir)}`,
      () => {
        const pid = readPid();
        if (pid !== undefined) {
          signal(pid, 'SIGSTOP');
          for (const member of aliveTree(pid)) signal(member, 'SIGKILL');
        }
        removeDir(baseDir);
      },
    );

    const init = await pgRun('initdb', [
      '-D',
      dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C',
      '-N',
    ]);
    if (init.code !== 0) {
      throw new ServiceStartError(
        'postgres',
        `initdb failed (exit ${init.code})${user ? `; as root it runs as the postgres user, which must be able to reach ${baseDir}` : ''}`,
        init.output,
      );
    }
    // A free port can be taken between freePort() and the bind: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const started = await pgCtlStart();
      if (started.code === 0) break;
      const output = `${started.output}\n${log()}`;
      await killGroup();
      if (attempt >= 3 || !/could not bind|Address already in use/i.test(output)) {
        throw new ServiceStartError('postgres', `pg_ctl start failed (exit ${started.code})`, output);
      }
    }
    running = true;
  } catch (e) {
    if (handle) handle.release();
    else removeDir(baseDir);
    throw e;
  }

  const version = Number(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim());
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const cleanup = handle;

  const server: PostgresServer = {
    name,
    url,
    host: '127.0.0.1',
    port,
    version,
    dataDir,
    baseDir,
    get running() {
      return running;
    },
    get pid() {
      return running ? readPid() : undefined;
    },
    createDatabase: (prefix?: string) => createDatabase(url, prefix),
    async start() {
      if (destroyed) throw new ServiceStartError('postgres', 'start() after destroy()');
      if (running) return;
      const started = await pgCtlStart();
      if (started.code !== 0) {
        await killGroup();
        throw new ServiceStartError(
          'postgres',
          `pg_ctl start failed (exit ${started.code})`,
          `${started.output}\n${log()}`,
        );
      }
      running = true;
    },
    async stop(stopOptions = {}) {
      if (!running) return;
      const mode = stopOptions.mode ?? 'fast';
      const stopped = await pgRun('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', String(timeoutSeconds), 'stop']);
      if (stopped.code !== 0) {
        throw new ServiceStartError(
          'postgres',
          `pg_ctl stop -m ${mode} failed (exit ${stopped.code})`,
          `${stopped.output}\n${log()}`,
        );
      }
      running = false;
    },
    async kill() {
      if (!running) return;
      await killGroup();
    },
    log,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      if (running) {
        const stopped = await pgRun('pg_ctl', [
          '-D',
          dataDir,
          '-m',
          'immediate',
          '-w',
          '-t',
          String(timeoutSeconds),
          'stop',
        ]);
        if (stopped.code !== 0) await killGroup();
        running = false;
      }
      cleanup.release();
    },
  };
  return server;
}
