import type BetterSqlite3 from 'better-sqlite3';
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
import type { WriteQueue } from './write-queue.js';

interface Row {
  session_id: string;
  group_id: string;
  cipher_suite: number;
  epoch: number;
  last_commit: string | null;
  expires_at: number;
}

function statements(db: BetterSqlite3.Database) {
  return {
    get: db.prepare<[string], Row>(
      'SELECT session_id, group_id, cipher_suite, epoch, last_commit, expires_at FROM mls_groups WHERE session_id = ?',
    ),
    count: db.prepare<[], number>("SELECT count FROM totals WHERE name = 'mls_groups'").pluck(),
    addCount: db.prepare("UPDATE totals SET count = count + ? WHERE name = 'mls_groups'"),
    insert: db.prepare(
      'INSERT INTO mls_groups (session_id, group_id, cipher_suite, epoch, last_commit, expires_at) VALUES (?, ?, ?, ?, NULL, ?)',
    ),
    // The compare and the set are one statement: of two commits for one epoch, one changes the row.
    advance: db.prepare('UPDATE mls_groups SET epoch = epoch + 1, last_commit = ? WHERE session_id = ? AND epoch = ?'),
    retract: db.prepare(
      'UPDATE mls_groups SET epoch = epoch - 1, last_commit = NULL WHERE session_id = ? AND epoch = ? AND last_commit = ?',
    ),
    delete: db.prepare('DELETE FROM mls_groups WHERE session_id = ?'),
    sweep: db.prepare(
      'DELETE FROM mls_groups WHERE rowid IN (SELECT rowid FROM mls_groups WHERE expires_at <= ? LIMIT ?)',
    ),
  };
}

/** The relay's MLS group state on SQLite; writes go through the shared `WriteQueue`. */
export class SqliteMlsGroupStore implements MlsGroupStore {
  readonly maxGroups: number;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, options: { maxGroups?: number } = {}) {
    const max = options.maxGroups ?? DEFAULT_MAX_GROUPS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxGroups must be a positive integer');
    this.maxGroups = max;
    this.#writer = writer;
    this.#s = statements(db);
  }

  async create(group: MlsGroupInput): Promise<CreateGroupResult> {
    this.#open();
    checkGroupInput(group);
    const s = this.#s;
    return this.#writer.run((): CreateGroupResult => {
      const existing = s.get.get(group.sessionId);
      if (existing) return { status: 'exists', group: record(existing) };
      if (s.count.get()! >= this.maxGroups) return { status: 'full' };
      s.insert.run(group.sessionId, group.groupId, group.cipherSuite, group.epoch, group.expiresAt);
      s.addCount.run(1);
      return { status: 'created', group: record(s.get.get(group.sessionId)!) };
    });
  }

  async get(sessionId: string): Promise<MlsGroupRecord | undefined> {
    this.#open();
    const row = this.#s.get.get(sessionId);
    return row && record(row);
  }

  async advance(sessionId: string, fromEpoch: number, commitHash: string): Promise<AdvanceResult> {
    this.#open();
    checkEpoch(fromEpoch);
    const s = this.#s;
    return this.#writer.run((): AdvanceResult => {
      if (s.advance.run(commitHash, sessionId, fromEpoch).changes === 1) {
        return { status: 'advanced', epoch: fromEpoch + 1 };
      }
      const row = s.get.get(sessionId);
      if (!row) return { status: 'missing' };
      if (row.epoch === fromEpoch + 1 && row.last_commit === commitHash) return { status: 'repeat', epoch: row.epoch };
      return { status: 'conflict', epoch: row.epoch };
    });
  }

  async retract(sessionId: string, fromEpoch: number, commitHash: string): Promise<boolean> {
    this.#open();
    checkEpoch(fromEpoch);
    const s = this.#s;
    return this.#writer.run(() => s.retract.run(sessionId, fromEpoch + 1, commitHash).changes === 1);
  }

  async delete(sessionId: string): Promise<void> {
    this.#open();
    await this.#writer.run(() => {
      const { changes } = this.#s.delete.run(sessionId);
      if (changes > 0) this.#s.addCount.run(-changes);
    });
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(() => {
      const { changes } = this.#s.sweep.run(now, n);
      if (changes > 0) this.#s.addCount.run(-changes);
      return changes;
    });
  }

  async size(): Promise<number> {
    this.#open();
    return this.#s.count.get()!;
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }
}

function record(row: Row): MlsGroupRecord {
  return {
    sessionId: row.session_id,
    groupId: row.group_id,
    cipherSuite: row.cipher_suite,
    epoch: row.epoch,
    lastCommit: row.last_commit ?? undefined,
    expiresAt: row.expires_at,
  };
}
