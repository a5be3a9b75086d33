import type { SessionStoreLimits } from '@wmp/session';
import type { BoxLimits, BoxStore } from '../contracts/box-store.js';
import type { EvidenceLimits } from '../contracts/evidence-store.js';
import type { KeyPackageLimits } from '../contracts/key-package-store.js';
import type { QueueLimits } from '../contracts/queue-store.js';
import type { RelayStores } from '../contracts/relay-stores.js';
import { PostgresBoxStore } from './postgres-box-store.js';
import { PostgresDatabase, type PostgresDatabaseOptions } from './postgres-database.js';
import { PostgresEvidenceStore } from './postgres-evidence-store.js';
import { PostgresInventory } from './postgres-inventory.js';
import { PostgresKeyPackageStore } from './postgres-key-package-store.js';
import { PostgresMlsGroupStore } from './postgres-mls-group-store.js';
import { PostgresQueueStore } from './postgres-queue-store.js';
import { PostgresSessionStore } from './postgres-session-store.js';
import type { WriterStats } from './postgres-writer.js';

/**
 * Makes the OHAN box store on the same database (its tables come with its own migration, its
 * writes go through `db.writer`): the slot where the PostgreSQL box adapter plugs in.
 */
export type PostgresBoxStoreFactory = (db: PostgresDatabase, limits: Partial<BoxLimits>) => BoxStore;

/**
 * The PostgreSQL box (`PostgresBoxStore`) on the database's pool: its tables are migration 2 of
 * the relay's schema. What a relay node passes as `boxStore`.
 */
export const postgresBoxStore: PostgresBoxStoreFactory = (db, limits) => new PostgresBoxStore(db.pool, limits);

export interface PostgresStoreOptions extends PostgresDatabaseOptions {
  readonly queue?: Partial<QueueLimits>;
  /** Caps of the session store (all sessions, and the unauthenticated ones). */
  readonly sessions?: Partial<SessionStoreLimits>;
  readonly keyPackages?: Partial<KeyPackageLimits>;
  readonly maxGroups?: number;
  /** Caps of the evidence repository. */
  readonly evidence?: Partial<EvidenceLimits>;
  /** Limits handed to `boxStore`. */
  readonly box?: Partial<BoxLimits>;
  /** The box adapter; without it the bundle has no `box` and is not yet `RelayStores`. */
  readonly boxStore?: PostgresBoxStoreFactory;
}

/**
 * The relay's stores on PostgreSQL for one node of a cluster (docs/architecture.md, "Cluster"): queue,
 * sessions, key packages, MLS group state, the evidence repository (and the box, given `boxStore`) on one
 * `PostgresDatabase`: a read pool and one batching writer connection. Open one per process;
 * any number of processes may open the same database.
 */
export class PostgresStore<B extends BoxStore | undefined = BoxStore | undefined> implements Omit<RelayStores, 'box'> {
  readonly database: PostgresDatabase;
  readonly queue: PostgresQueueStore;
  readonly sessions: PostgresSessionStore;
  readonly keyPackages: PostgresKeyPackageStore;
  readonly groups: PostgresMlsGroupStore;
  readonly evidence: PostgresEvidenceStore;
  readonly box: B;
  /** The operator's lists (the box's recipients only once the box's tables are there: given `boxStore`). */
  readonly inventory: PostgresInventory;

  private constructor(database: PostgresDatabase, options: PostgresStoreOptions) {
    this.database = database;
    this.queue = new PostgresQueueStore(database, options.queue);
    this.sessions = new PostgresSessionStore(database, options.sessions);
    this.keyPackages = new PostgresKeyPackageStore(database, options.keyPackages);
    this.groups = new PostgresMlsGroupStore(
      database,
      options.maxGroups === undefined ? {} : { maxGroups: options.maxGroups },
    );
    this.evidence = new PostgresEvidenceStore(database, options.evidence);
    this.box = options.boxStore?.(database, options.box ?? {}) as B;
    this.inventory = new PostgresInventory(database);
  }

  /**
   * Connects and migrates (see `PostgresDatabase.open`: `StoreUnavailableError` when the server
   * cannot be used, `StoreSchemaError` for a newer schema), then builds the stores.
   */
  static open(options: PostgresStoreOptions & { boxStore: PostgresBoxStoreFactory }): Promise<PostgresStore<BoxStore>>;
  static open(options: PostgresStoreOptions): Promise<PostgresStore<undefined>>;
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const database = await PostgresDatabase.open(options);
    try {
      return new PostgresStore(database, options);
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  /** Group-commit figures of this node's writer. */
  get writeStats(): WriterStats {
    return this.database.writeStats;
  }

  /** Runs `fn` while no other node runs one under the same name (see `PostgresDatabase.withSweepLock`). */
  withSweepLock<T>(name: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    return this.database.withSweepLock(name, fn);
  }

  /** Commits everything queued (the box's writes first), then closes the writers and the pool. */
  async close(): Promise<void> {
    // The box's own writer (a BoxStore has no close of its own: the bundle owns its adapters).
    await (this.box as { close?: () => Promise<void> } | undefined)?.close?.();
    await this.database.close();
  }
}
