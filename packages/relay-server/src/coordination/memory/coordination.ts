import { MemoryReplayCache } from '@wmp/jcs-signing';
import type { Coordination, CoordinationHealth, CoordinationLimits } from '../contracts/coordination.js';
import {
  DEFAULT_KEY_PACKAGE_BUDGET_NAME,
  type KeyPackageBudgetOptions,
  type KeyPackageBudgets,
} from '../contracts/key-package-budgets.js';
import type { RateLimiter, TokenBucketOptions } from '../contracts/rate-limiter.js';
import { DEFAULT_STATUS_CLAIMS_MAX_ENTRIES } from '../contracts/replay-cache.js';
import { MAX_NODE_NOTE_CHARS, type WakeUpLimits } from '../contracts/wake-ups.js';
import { MemoryKeyPackageBudgets } from './key-package-budgets.js';
import { MemoryPresenceDirectory } from './presence-directory.js';
import { TokenBuckets } from './token-buckets.js';
import { MemoryWakeBus, MemoryWakeUps } from './wake-ups.js';

export interface MemoryCoordinationOptions {
  readonly limits?: CoordinationLimits;
  /** The clock of every cache and bucket of the hub. */
  readonly now?: () => number;
}

/**
 * The shared state of the nodes of one process: what Redis is to a cluster. `node(id)` gives each
 * node its bundle; nonces, replays, rate limits, budgets, presence and wake-ups are shared by all
 * of them. One node is the single-process relay (`memoryCoordination()`); several let tests and
 * embedders run many relay nodes on one store in one process.
 */
export class MemoryCoordinationHub {
  readonly nonces: MemoryReplayCache;
  readonly replays: MemoryReplayCache;
  readonly statusClaims: MemoryReplayCache;
  readonly presence: MemoryPresenceDirectory;
  readonly #wakeBus = new MemoryWakeBus();
  readonly #boxBus = new MemoryWakeBus();
  readonly #nodeBus = new MemoryWakeBus();
  readonly #broadcastBus = new MemoryWakeBus();
  readonly #limiters = new Map<string, TokenBuckets>();
  readonly #budgets = new Map<string, MemoryKeyPackageBudgets>();
  readonly #limits: CoordinationLimits;
  readonly #now: () => number;

  constructor(options: MemoryCoordinationOptions = {}) {
    this.#limits = options.limits ?? {};
    this.#now = options.now ?? Date.now;
    const now = this.#now;
    this.nonces = new MemoryReplayCache({ ...this.#limits.nonces, now });
    this.replays = new MemoryReplayCache({ ...this.#limits.replays, now });
    this.statusClaims = new MemoryReplayCache({
      maxEntries: DEFAULT_STATUS_CLAIMS_MAX_ENTRIES,
      ...this.#limits.statusClaims,
      now,
    });
    this.presence = new MemoryPresenceDirectory({ now: this.#now });
  }

  /** The bundle of node `nodeId` on this hub. */
  node(nodeId: string): Coordination {
    const wakeUps = new MemoryWakeUps({ bus: this.#wakeBus, ...limitsOf(this.#limits.wakeUps) });
    const boxWakeUps = new MemoryWakeUps({
      bus: this.#boxBus,
      ...limitsOf(this.#limits.boxWakeUps ?? this.#limits.wakeUps),
    });
    const nodes = new MemoryWakeUps({ bus: this.#nodeBus, maxNoteChars: MAX_NODE_NOTE_CHARS });
    const broadcast = new MemoryWakeUps({ bus: this.#broadcastBus });
    const hub = this;
    let closed = false;
    return {
      nodeId,
      nonces: this.nonces,
      replays: this.replays,
      statusClaims: this.statusClaims,
      presence: this.presence,
      wakeUps,
      boxWakeUps,
      nodes,
      broadcast,
      rateLimiter: (name, options) => hub.#limiter(name, options),
      keyPackageBudgets: (options) => hub.#budget(options),
      health: (): CoordinationHealth => 'ok',
      onHealth: () => () => {},
      async close() {
        if (closed) return;
        closed = true;
        hub.presence.withdrawNode(nodeId);
        await Promise.all([wakeUps.close(), boxWakeUps.close(), nodes.close(), broadcast.close()]);
      },
    };
  }

  /** Node `nodeId` dies without closing: its presence expires by TTL, its handlers hear nothing more. */
  async crash(node: Coordination): Promise<void> {
    this.presence.stopNode(node.nodeId);
    await Promise.all([node.wakeUps.close(), node.boxWakeUps.close(), node.nodes.close(), node.broadcast.close()]);
  }

  #limiter(name: string, options: TokenBucketOptions): RateLimiter {
    let limiter = this.#limiters.get(name);
    if (limiter === undefined) {
      limiter = new TokenBuckets({ now: this.#now, ...options });
      this.#limiters.set(name, limiter);
    }
    return limiter;
  }

  #budget(options: KeyPackageBudgetOptions): KeyPackageBudgets {
    const name = options.name ?? DEFAULT_KEY_PACKAGE_BUDGET_NAME;
    let budget = this.#budgets.get(name);
    if (budget === undefined) {
      budget = new MemoryKeyPackageBudgets({ now: this.#now, ...options });
      this.#budgets.set(name, budget);
    }
    return budget;
  }
}

function limitsOf(limits: WakeUpLimits | undefined): { limits?: WakeUpLimits } {
  return limits === undefined ? {} : { limits };
}

/** The single-process coordination: one node on a hub of its own (the relay's behaviour without a cluster). */
export function memoryCoordination(options: MemoryCoordinationOptions & { nodeId?: string } = {}): Coordination {
  return new MemoryCoordinationHub(options).node(options.nodeId ?? 'local');
}
