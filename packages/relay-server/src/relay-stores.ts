import type { SessionStore } from '@wmp/session';
import type { BoxStore } from './box-store.js';
import type { QueueStore } from './queue-store.js';

/** Everything the relay keeps, behind the async interfaces of DESIGN §6, in one handle. */
export interface RelayStores {
  readonly queue: QueueStore;
  readonly box: BoxStore;
  readonly sessions: SessionStore;
  /** Waits for queued writes to commit, then releases the storage; every later call is refused. */
  close(): Promise<void>;
}
