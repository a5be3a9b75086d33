import type { SessionStore, SessionStoreLimits } from '@wmp/session';
import type { BoxStore } from './box-store.js';
import type { EvidenceLimits, EvidenceStore } from './evidence-store.js';
import type { KeyPackageStore } from './key-package-store.js';
import type { MlsGroupStore } from './mls-group-store.js';
import type { QueueLimits, QueueStore } from './queue-store.js';
import type { StoreInventory } from './store-inventory.js';

/** Everything the relay keeps, behind the async interfaces of docs/architecture.md, "Storage", in one handle. */
export interface RelayStores {
  readonly queue: QueueStore;
  readonly box: BoxStore;
  readonly sessions: SessionStore;
  /** MLS key packages published by participants (`ohan.mls.keypackage.*`). */
  readonly keyPackages: KeyPackageStore;
  /** The MLS group state (epoch) of each group session, for commit ordering. */
  readonly groups: MlsGroupStore;
  /** The evidence repository (wmp-tables §9): signed records of what the relay witnessed, and their open cases. */
  readonly evidence: EvidenceStore;
  /**
   * What an operator lists (queues and outboxes, box recipients, sessions): every adapter of this
   * package has it; a store written elsewhere may leave it out (the admin commands then say so).
   */
  readonly inventory?: StoreInventory;
  /**
   * Stores that several processes share (PostgreSQL) run `fn` only while no other process runs a
   * sweep of the same name (`ran: false` at once otherwise), so one node of a cluster sweeps at a
   * time; stores of one process leave it out.
   */
  withSweepLock?<T>(name: string, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** Waits for queued writes to commit, then releases the storage; every later call is refused. */
  close(): Promise<void>;
}

/**
 * The caps a relay asks its stores to enforce, in the same atomic operation as each write (a
 * store factory gets them; a ready store reports its own through `queue.limits` and
 * `sessions.limits`).
 */
export interface RelayStoreLimits {
  readonly queue: Partial<QueueLimits>;
  readonly sessions: Partial<SessionStoreLimits>;
  readonly evidence?: Partial<EvidenceLimits>;
}
