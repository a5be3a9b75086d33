import { clampCount, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import {
  type AdvanceResult,
  type CreateGroupResult,
  checkEpoch,
  checkGroupInput,
  DEFAULT_MAX_GROUPS,
  type MlsGroupInput,
  type MlsGroupRecord,
  type MlsGroupStore,
} from '../contracts/mls-group-store.js';
import { StoreClosedError } from '../errors.js';

/**
 * MLS group state in memory (tests, `--ephemeral` relays); same behaviour as the SQLite adapter.
 * Each call runs to completion before the next (no await inside), so `advance` is atomic.
 */
export class MemoryMlsGroupStore implements MlsGroupStore {
  readonly maxGroups: number;
  readonly #groups = new Map<string, MlsGroupRecord>();
  #closed = false;

  constructor(options: { maxGroups?: number } = {}) {
    const max = options.maxGroups ?? DEFAULT_MAX_GROUPS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxGroups must be a positive integer');
    this.maxGroups = max;
  }

  async create(group: MlsGroupInput): Promise<CreateGroupResult> {
    this.#open();
    checkGroupInput(group);
    const existing = this.#groups.get(group.sessionId);
    if (existing) return { status: 'exists', group: { ...existing } };
    if (this.#groups.size >= this.maxGroups) return { status: 'full' };
    const record: MlsGroupRecord = { ...pick(group), lastCommit: undefined };
    this.#groups.set(group.sessionId, record);
    return { status: 'created', group: { ...record } };
  }

  async get(sessionId: string): Promise<MlsGroupRecord | undefined> {
    this.#open();
    const g = this.#groups.get(sessionId);
    return g && { ...g };
  }

  async advance(sessionId: string, fromEpoch: number, commitHash: string): Promise<AdvanceResult> {
    this.#open();
    checkEpoch(fromEpoch);
    const g = this.#groups.get(sessionId);
    if (!g) return { status: 'missing' };
    if (g.epoch === fromEpoch) {
      this.#groups.set(sessionId, { ...g, epoch: fromEpoch + 1, lastCommit: commitHash });
      return { status: 'advanced', epoch: fromEpoch + 1 };
    }
    if (g.epoch === fromEpoch + 1 && g.lastCommit === commitHash) return { status: 'repeat', epoch: g.epoch };
    return { status: 'conflict', epoch: g.epoch };
  }

  async retract(sessionId: string, fromEpoch: number, commitHash: string): Promise<boolean> {
    this.#open();
    checkEpoch(fromEpoch);
    const g = this.#groups.get(sessionId);
    if (!g || g.epoch !== fromEpoch + 1 || g.lastCommit !== commitHash) return false;
    this.#groups.set(sessionId, { ...g, epoch: fromEpoch, lastCommit: undefined });
    return true;
  }

  async delete(sessionId: string): Promise<void> {
    this.#open();
    this.#groups.delete(sessionId);
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    let removed = 0;
    for (const [id, g] of this.#groups) {
      if (removed === n) break;
      if (g.expiresAt <= now) {
        this.#groups.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async size(): Promise<number> {
    this.#open();
    return this.#groups.size;
  }

  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}

function pick(g: MlsGroupInput): Omit<MlsGroupRecord, 'lastCommit'> {
  return {
    sessionId: g.sessionId,
    groupId: g.groupId,
    cipherSuite: g.cipherSuite,
    epoch: g.epoch,
    expiresAt: g.expiresAt,
  };
}
