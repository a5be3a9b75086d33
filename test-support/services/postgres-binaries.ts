// Where the PostgreSQL tools are and how they run: the Debian package's binaries, one tool run
// with its output, and the user the server runs as (initdb and postgres refuse root).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceBinaryMissingError } from './common.js';

export const DEBIAN_PACKAGE = 'postgresql';
const PREFERRED_VERSION = '15';

/** Finds initdb/pg_ctl, or throws ServiceBinaryMissingError naming the Debian package. */
export function postgresBinDir(explicit?: string): string {
  const chosen = explicit ?? process.env.WMP_PG_BINDIR;
  if (chosen) {
    for (const tool of ['initdb', 'pg_ctl', 'postgres']) {
      if (!existsSync(join(chosen, tool)))
        throw new ServiceBinaryMissingError('postgres', join(chosen, tool), DEBIAN_PACKAGE);
    }
    return chosen;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')) && existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const version = versions.includes(PREFERRED_VERSION) ? PREFERRED_VERSION : versions[0];
  if (version === undefined) {
    throw new ServiceBinaryMissingError(
      'postgres',
      `${root}/${PREFERRED_VERSION}/bin/initdb`,
      DEBIAN_PACKAGE,
      'or set WMP_PG_BINDIR to the directory of initdb and pg_ctl',
    );
  }
  return join(root, version, 'bin');
}

export interface RunResult {
  readonly code: number;
  readonly output: string;
}

export function runTool(file: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, encoding: 'utf8', timeout: timeoutMs }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && e.code === 'ENOENT') {
        reject(e);
        return;
      }
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

export interface ServerUser {
  readonly uid: number;
  readonly gid: number;
}

/** As root: the `postgres` user's ids (initdb/postgres refuse root); otherwise undefined. */
export async function serverUser(cwd: string): Promise<ServerUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = await Promise.all(['-u', '-g'].map((flag) => runTool('id', [flag, 'postgres'], cwd, 10_000)));
  const [uid, gid] = ids.map((r) => (r.code === 0 ? Number(r.output.trim()) : Number.NaN));
  if (uid === undefined || gid === undefined || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new ServiceBinaryMissingError(
      'postgres',
      'the postgres user',
      DEBIAN_PACKAGE,
      'running as root, the server must run as the user postgres, which the Debian package creates',
    );
  }
  return { uid, gid };
}
