// What the admin does to a data directory no relay holds: open its stores, restore a backup
// over its database, copy it into PostgreSQL. Each holds the directory's lock while it works,
// so a relay that starts meanwhile refuses to (one process per data directory).
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RelayStores } from '@wmp/relay-server';
import { AdminError } from './admin-errors.js';

const DATABASE_FILE = 'relay.db';

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

function requireDatabase(dataDir: string): string {
  const path = databasePath(dataDir);
  if (!existsSync(path)) throw new AdminError('not_found', `no relay database in ${dataDir} (${DATABASE_FILE})`);
  return path;
}

function lockedError(error: unknown): never {
  if ((error as { code?: string }).code === 'ERR_STORE_LOCKED') {
    throw new AdminError('conflict', 'a relay holds the data directory but its admin socket does not answer');
  }
  throw error;
}

/** The data directory's stores, opened as the relay opens them (exclusively), with a backup of the file. */
export async function openDataDir(
  dataDir: string,
): Promise<{ stores: RelayStores; backup: (file: string) => Promise<void> }> {
  const path = requireDatabase(dataDir);
  const { SqliteStore } = await import('@wmp/relay-server/sqlite');
  let store: ReturnType<typeof SqliteStore.open>;
  try {
    store = SqliteStore.open({ path, exclusive: true });
  } catch (error) {
    lockedError(error);
  }
  return { stores: store, backup: (file) => store.backup(file) };
}

/** Runs `fn` holding the data directory's lock (the file a running relay holds). */
async function withDataDirLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const { holdLockFile } = await import('@wmp/relay-server/sqlite');
  let lock: ReturnType<typeof holdLockFile>;
  try {
    lock = holdLockFile(`${databasePath(dataDir)}-lock`);
  } catch (error) {
    lockedError(error);
  }
  try {
    return await fn();
  } finally {
    lock.close();
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // Not every platform can fsync a directory.
  } finally {
    closeSync(fd);
  }
}

/** Checks that `file` is a relay database this version can open (a newer one is refused, as the relay does). */
async function checkBackupFile(file: string): Promise<void> {
  if (!existsSync(file) || !statSync(file).isFile()) throw new AdminError('not_found', `${file} is not a file`);
  const { inspectDatabaseFile, SCHEMA_VERSION } = await import('@wmp/relay-server/sqlite');
  let info: ReturnType<typeof inspectDatabaseFile>;
  try {
    info = inspectDatabaseFile(file);
  } catch {
    throw new AdminError('usage', `${file} is not a relay database backup`);
  }
  if (!info.relay || !info.intact || info.version < 1) {
    throw new AdminError('usage', `${file} is not a relay database backup`);
  }
  if (info.version > SCHEMA_VERSION) {
    throw new AdminError('conflict', `${file} is of a newer relay (schema ${info.version}): upgrade wmp-relay first`);
  }
}

/**
 * Puts the backup `file` in place of the data directory's database. The database it replaces
 * (with its WAL) is kept beside it as `relay.db.before-restore-<time>`, never deleted.
 */
export async function restoreDataDir(dataDir: string, file: string, now = Date.now()) {
  await checkBackupFile(file);
  return withDataDirLock(dataDir, async () => {
    const path = databasePath(dataDir);
    const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
    const previous = existsSync(path) ? `${path}.before-restore-${stamp}` : undefined;
    // The copy first (0600, fsynced), then the swap: a crash leaves the old database or the new one.
    const incoming = `${path}.restoring`;
    closeSync(openSync(incoming, 'w', 0o600));
    copyFileSync(file, incoming);
    fsyncPath(incoming);
    if (previous !== undefined) {
      for (const suffix of ['-wal', '-shm', '']) {
        if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${previous}${suffix}`);
      }
    }
    renameSync(incoming, path);
    fsyncPath(dirname(path));
    return { restored: file, database: path, previous: previous ?? null };
  });
}

/** Copies the data directory's database into the empty PostgreSQL database at `url`. */
export async function migrateDataDir(dataDir: string, url: string) {
  const path = requireDatabase(dataDir);
  return withDataDirLock(dataDir, async () => {
    const [{ openDatabase }, { importSqliteDatabase, PostgresDatabase }] = await Promise.all([
      import('@wmp/relay-server/sqlite'),
      import('@wmp/relay-server/postgres'),
    ]);
    const source = openDatabase(path);
    try {
      const target = await PostgresDatabase.open({ url, applicationName: 'wmp-relay-admin' });
      try {
        const { rows } = await importSqliteDatabase(source, target);
        return {
          rows,
          next: [
            'next: start every node with --database-url, --redis-url and the same relay key:',
            `  --relay-key-file ${join(dataDir, 'relay-identity.key')} (copy it to each node, mode 0600)`,
          ],
        };
      } finally {
        await target.close();
      }
    } finally {
      source.close();
    }
  });
}
