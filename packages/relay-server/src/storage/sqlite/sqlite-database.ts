import Database from 'better-sqlite3';
import { RelayStoreError, StoreLockedError, StoreSchemaError } from '../errors.js';
import { MIGRATIONS, SCHEMA, SCHEMA_VERSION } from './sqlite-schema.js';

export interface OpenDatabaseOptions {
  /** Page cache in KiB (default 64 MiB, as measured: docs/architecture.md, "Storage"). */
  readonly cacheKiB?: number;
  /**
   * Hold the file for this connection alone until it closes (SQLite's exclusive locking mode): a
   * second process opening it fails at once with `StoreLockedError` instead of two relays
   * sharing one queue. The relay app opens its database this way.
   */
  readonly exclusive?: boolean;
  /**
   * COMMIT only writes the WAL (`synchronous=NORMAL`) and the caller fsyncs it before taking a
   * commit as durable, off the event loop (`WalFileSync` with a `WriteQueue`). Without it
   * (`synchronous=FULL`) COMMIT fsyncs the WAL itself, blocking the thread.
   */
  readonly syncAfterCommit?: boolean;
  /**
   * No automatic checkpoint on this connection (`wal_autocheckpoint=0`): the caller checkpoints
   * from another connection (`WalCheckpointer`, a worker thread). Not with `exclusive`.
   */
  readonly backgroundCheckpoint?: boolean;
}

/**
 * Opens (creating if needed) the relay's database file: WAL, so readers never wait for the
 * writer; `synchronous=FULL`, so a committed transaction survives power loss, not only a process
 * crash (group commit pays for it, see write-queue.ts), unless `syncAfterCommit` leaves that fsync
 * to the caller; schema created or checked.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): Database.Database {
  if (options.exclusive && options.backgroundCheckpoint) {
    throw new RangeError('an exclusive database has no other connection to checkpoint from');
  }
  const db = new Database(path);
  try {
    if (options.exclusive) lockExclusively(db);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal' && !db.memory) throw new RelayStoreError('ERR_STORE_SCHEMA', 'database does not support WAL');
    db.pragma(options.syncAfterCommit ? 'synchronous = NORMAL' : 'synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.pragma(`cache_size = -${Math.trunc(options.cacheKiB ?? 65536)}`);
    // A checkpointed WAL is truncated back to this size instead of keeping its high-water mark.
    db.pragma('journal_size_limit = 67108864');
    if (options.backgroundCheckpoint && !db.memory) db.pragma('wal_autocheckpoint = 0');
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Holds `path` (a small SQLite file of its own, created if needed) locked for this process until
 * the returned connection closes: a second process gets `StoreLockedError`. It guards a database
 * whose own connections must stay shared (a checkpointer on a worker thread opens one more).
 */
export function holdLockFile(path: string): Database.Database {
  const lock = new Database(path);
  try {
    lockExclusively(lock);
    return lock;
  } catch (error) {
    lock.close();
    throw error;
  }
}

/** Takes the file's exclusive lock now (not at the first write) and keeps it until close. */
function lockExclusively(db: Database.Database): void {
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new StoreLockedError();
    throw error;
  }
}

function migrate(db: Database.Database): void {
  // Read inside the write transaction, so two processes opening a new file do not both create it.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version === SCHEMA_VERSION) return;
    if (version < 0 || version > SCHEMA_VERSION) throw new StoreSchemaError(`unknown schema version ${version}`);
    if (version === 0) db.exec(SCHEMA);
    else for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** What `inspectDatabaseFile` found. */
export interface DatabaseFileInfo {
  /** It has the relay's tables. */
  readonly relay: boolean;
  /** Its schema version (`user_version`). */
  readonly version: number;
  /** SQLite's `quick_check` passed. */
  readonly intact: boolean;
}

/**
 * Reads a database file without changing it (read only, no migration): whether it is a relay
 * database, of which schema version, and intact. What a restore checks a backup with.
 */
export function inspectDatabaseFile(path: string): DatabaseFileInfo {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare<[], number>("SELECT count(*) FROM sqlite_master WHERE name IN ('wmp_messages', 'wmp_sessions')")
      .pluck()
      .get();
    return {
      relay: tables === 2,
      version: db.pragma('user_version', { simple: true }) as number,
      intact: db.pragma('quick_check', { simple: true }) === 'ok',
    };
  } finally {
    db.close();
  }
}
