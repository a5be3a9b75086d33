import { resolve } from 'node:path';
import type { SessionStoreLimits } from '@wmp/session';
import type BetterSqlite3 from 'better-sqlite3';
import type { BoxLimits } from '../contracts/box-store.js';
import type { EvidenceLimits } from '../contracts/evidence-store.js';
import type { KeyPackageLimits } from '../contracts/key-package-store.js';
import type { QueueLimits } from '../contracts/queue-store.js';
import type { RelayStores } from '../contracts/relay-stores.js';
import { StoreClosedError } from '../errors.js';
import { SqliteBoxStore } from './sqlite-box-store.js';
import { holdLockFile, openDatabase } from './sqlite-database.js';
import { SqliteEvidenceStore } from './sqlite-evidence-store.js';
import { SqliteInventory } from './sqlite-inventory.js';
import { SqliteKeyPackageStore } from './sqlite-key-package-store.js';
import { SqliteMlsGroupStore } from './sqlite-mls-group-store.js';
import { SqliteQueueStore } from './sqlite-queue-store.js';
import { SqliteSessionStore } from './sqlite-session-store.js';
import { WalCheckpointer, type WalCheckpointerStats } from './wal-checkpointer.js';
import { WalFileSync } from './wal-sync.js';
import { WriteQueue, type WriteQueueStats } from './write-queue.js';

export interface SqliteStoreOptions {
  /** The database file (created with its directory's permissions; WAL files sit beside it). */
  readonly path: string;
  readonly queue?: Partial<QueueLimits>;
  readonly box?: Partial<BoxLimits>;
  /** Caps of the session store (all sessions, and the unauthenticated ones). */
  readonly sessions?: Partial<SessionStoreLimits>;
  readonly keyPackages?: Partial<KeyPackageLimits>;
  readonly maxGroups?: number;
  /** Caps of the evidence repository. */
  readonly evidence?: Partial<EvidenceLimits>;
  /** Operations per transaction, 1..100 (default 100). */
  readonly maxBatch?: number;
  /** SQLite page cache in KiB (default 64 MiB). */
  readonly cacheKiB?: number;
  /**
   * Hold the file for this process: a second process gets `StoreLockedError`. The lock is a file
   * of its own beside the database (`<path>-lock`), so the checkpointer's connection can share it.
   */
  readonly exclusive?: boolean;
}

/**
 * The relay's default storage: queue, box, sessions, key packages, MLS group state and the
 * evidence repository in one
 * SQLite file, written by one `WriteQueue` (group commit, acknowledged once the WAL is fsynced
 * after COMMIT). Open one per
 * file and process.
 */
export class SqliteStore implements RelayStores {
  readonly queue: SqliteQueueStore;
  readonly box: SqliteBoxStore;
  readonly sessions: SqliteSessionStore;
  readonly keyPackages: SqliteKeyPackageStore;
  readonly groups: SqliteMlsGroupStore;
  readonly evidence: SqliteEvidenceStore;
  readonly inventory: SqliteInventory;
  readonly #db: BetterSqlite3.Database;
  readonly #writer: WriteQueue;
  readonly #checkpointer: WalCheckpointer | undefined;
  readonly #lock: BetterSqlite3.Database | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    db: BetterSqlite3.Database,
    lock: BetterSqlite3.Database | undefined,
    options: SqliteStoreOptions,
  ) {
    this.#db = db;
    this.#lock = lock;
    this.#writer = new WriteQueue(db, {
      ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
      // The WAL's fsync runs on the thread pool after COMMIT; callers settle after it.
      ...(db.memory ? {} : { sync: new WalFileSync(`${db.name}-wal`) }),
    });
    if (!db.memory) {
      // Checkpoints off the event loop; should the worker fail, the connection does them again.
      const checkpointer = new WalCheckpointer(resolve(db.name), () => db.pragma('wal_autocheckpoint = 1000'));
      this.#writer.onCommit(() => checkpointer.committed());
      this.#checkpointer = checkpointer;
    }
    this.queue = new SqliteQueueStore(db, this.#writer, options.queue);
    this.box = new SqliteBoxStore(db, this.#writer, options.box);
    this.sessions = new SqliteSessionStore(db, this.#writer, options.sessions);
    this.keyPackages = new SqliteKeyPackageStore(db, this.#writer, options.keyPackages);
    this.groups = new SqliteMlsGroupStore(
      db,
      this.#writer,
      options.maxGroups === undefined ? {} : { maxGroups: options.maxGroups },
    );
    this.evidence = new SqliteEvidenceStore(db, this.#writer, options.evidence);
    this.inventory = new SqliteInventory(db, () => this.#writer.closed);
  }

  static open(options: SqliteStoreOptions): SqliteStore {
    const lock = options.exclusive ? holdLockFile(`${options.path}-lock`) : undefined;
    let db: BetterSqlite3.Database | undefined;
    try {
      db = openDatabase(options.path, {
        ...(options.cacheKiB === undefined ? {} : { cacheKiB: options.cacheKiB }),
        syncAfterCommit: true,
        backgroundCheckpoint: true,
      });
      return new SqliteStore(db, lock, options);
    } catch (error) {
      db?.close();
      lock?.close();
      throw error;
    }
  }

  /** The background checkpointer's figures (undefined for an in-memory database). */
  get checkpointStats(): WalCheckpointerStats | undefined {
    return this.#checkpointer?.stats;
  }

  /** Group-commit figures: transactions and operations committed so far. */
  get writeStats(): WriteQueueStats {
    return this.#writer.stats;
  }

  /**
   * A consistent copy of the whole database into `file` (SQLite's online backup API, page by page
   * between the writer's transactions, so the relay keeps serving): what was committed when it
   * finished. `file` is written over; the caller makes it (with the mode it wants) or checks it
   * is absent. Resolves once the copy is complete.
   */
  async backup(file: string): Promise<void> {
    if (this.#writer.closed) throw new StoreClosedError();
    await this.#db.backup(file);
  }

  /** Commits everything queued, then closes the file (the WAL is checkpointed by SQLite on close). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writer.close();
      await this.#checkpointer?.close();
      this.#db.close();
      this.#lock?.close();
    })();
    return this.#closing;
  }
}
