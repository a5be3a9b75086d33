import type { SessionStoreLimits } from '@wmp/session';
import type { BoxLimits } from '../contracts/box-store.js';
import type { EvidenceLimits } from '../contracts/evidence-store.js';
import type { KeyPackageLimits } from '../contracts/key-package-store.js';
import type { QueueLimits } from '../contracts/queue-store.js';
import type { RelayStores } from '../contracts/relay-stores.js';
import type { StoreInventory } from '../contracts/store-inventory.js';
import { ListedMemorySessionStore } from './listed-memory-session-store.js';
import { MemoryBoxStore } from './memory-box-store.js';
import { MemoryEvidenceStore } from './memory-evidence-store.js';
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
  readonly evidence?: Partial<EvidenceLimits>;
}

/**
 * All of the relay's stores in memory: for tests and `--ephemeral` runs. Sessions use
 * `MemorySessionStore` of @wmp/session (the one the session engine is tested with, here able to
 * list its sessions); the shared session suite runs it next to `SqliteSessionStore`.
 */
export class MemoryRelayStores implements RelayStores {
  readonly queue: MemoryQueueStore;
  readonly box: MemoryBoxStore;
  readonly sessions: ListedMemorySessionStore;
  readonly keyPackages: MemoryKeyPackageStore;
  readonly groups: MemoryMlsGroupStore;
  readonly evidence: MemoryEvidenceStore;
  readonly inventory: StoreInventory;

  constructor(options: MemoryStoreOptions = {}) {
    this.queue = new MemoryQueueStore(options.queue);
    this.box = new MemoryBoxStore(options.box);
    this.sessions = new ListedMemorySessionStore(options.sessions);
    this.keyPackages = new MemoryKeyPackageStore(options.keyPackages);
    this.groups = new MemoryMlsGroupStore(options.maxGroups === undefined ? {} : { maxGroups: options.maxGroups });
    this.evidence = new MemoryEvidenceStore(options.evidence);
    const { queue, box, sessions } = this;
    this.inventory = {
      queues: (after, limit) => queue.inventory(after, limit),
      boxes: (after, limit) => box.inventory(after, limit),
      sessions: (after, limit) => sessions.list(after, limit),
    };
  }

  async close(): Promise<void> {
    this.queue.close();
    this.box.close();
    this.keyPackages.close();
    this.groups.close();
    this.evidence.close();
  }
}
