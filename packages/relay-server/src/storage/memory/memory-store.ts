import { MemorySessionStore, type SessionStoreLimits } from '@wmp/session';
import type { BoxLimits } from '../contracts/box-store.js';
import type { KeyPackageLimits } from '../contracts/key-package-store.js';
import type { QueueLimits } from '../contracts/queue-store.js';
import type { RelayStores } from '../contracts/relay-stores.js';
import { MemoryBoxStore } from './memory-box-store.js';
import { MemoryKeyPackageStore } from './memory-key-package-store.js';
import { MemoryMlsGroupStore } from './memory-mls-group-store.js';
import { MemoryQueueStore } from './memory-queue-store.js';

export interface MemoryStoreOptions {
  readonly queue?: Partial<QueueLimits>;
  readonly box?: Partial<BoxLimits>;
  /** Caps of the session store (all sessions, and the unauthenticated ones). */
  readonly sessions?: Partial<SessionStoreLimits>;
  readonly keyPackages?: Partial<KeyPackageLimits>;
  readonly maxGroups?: number;
}

/**
 * All of the relay's stores in memory: for tests and `--ephemeral` runs. Sessions use
 * `MemorySessionStore` of @wmp/session (the one the session engine is tested with); the shared
 * session suite runs it next to `SqliteSessionStore`.
 */
export class MemoryRelayStores implements RelayStores {
  readonly queue: MemoryQueueStore;
  readonly box: MemoryBoxStore;
  readonly sessions: MemorySessionStore;
  readonly keyPackages: MemoryKeyPackageStore;
  readonly groups: MemoryMlsGroupStore;

  constructor(options: MemoryStoreOptions = {}) {
    this.queue = new MemoryQueueStore(options.queue);
    this.box = new MemoryBoxStore(options.box);
    this.sessions = new MemorySessionStore(options.sessions);
    this.keyPackages = new MemoryKeyPackageStore(options.keyPackages);
    this.groups = new MemoryMlsGroupStore(options.maxGroups === undefined ? {} : { maxGroups: options.maxGroups });
  }

  async close(): Promise<void> {
    this.queue.close();
    this.box.close();
    this.keyPackages.close();
    this.groups.close();
  }
}
