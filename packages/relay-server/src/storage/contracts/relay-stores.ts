import type { SessionStore } from '@wmp/session';
import type { BoxStore } from './box-store.js';
import type { KeyPackageStore } from './key-package-store.js';
import type { MlsGroupStore } from './mls-group-store.js';
import type { QueueStore } from './queue-store.js';

/** Everything the relay keeps, behind the async interfaces of DESIGN §6, in one handle. */
export interface RelayStores {
  readonly queue: QueueStore;
  readonly box: BoxStore;
  readonly sessions: SessionStore;
  /** MLS key packages published by participants (`ohan.mls.keypackage.*`). */
  readonly keyPackages: KeyPackageStore;
  /** The MLS group state (epoch) of each group session, for commit ordering. */
  readonly groups: MlsGroupStore;
  /** Waits for queued writes to commit, then releases the storage; every later call is refused. */
  close(): Promise<void>;
}
