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
import type { PostgresDatabase } from './postgres-database.js';

const TOTALS = 'mls_groups';

interface Row {
  session_id: string;
  group_id: string;
  cipher_suite: number;
  epoch: number;
  last_commit: string | null;
  expires_at: number;
}

const COLUMNS = 'session_id, group_id, cipher_suite, epoch, last_commit, expires_at';

const SQL = {
  get: `SELECT ${COLUMNS} FROM mls_groups WHERE session_id = $1`,
  insert: `INSERT INTO mls_groups (${COLUMNS}) VALUES ($1, $2, $3, $4, NULL, $5)
           ON CONFLICT (session_id) DO NOTHING RETURNING ${COLUMNS}`,
  // The compare and the set are one statement: of two commits for one epoch, one changes the row.
  // The SELECT reads the row as it was before the UPDATE (a data-modifying CTE is not visible to
  // its own query), to tell a retry of the winner from a conflict in the same round trip.
  advance: `WITH up AS (
              UPDATE mls_groups SET epoch = epoch + 1, last_commit = $2 WHERE session_id = $1 AND epoch = $3
              RETURNING epoch)
            SELECT (SELECT epoch FROM up) AS advanced, g.epoch, g.last_commit FROM mls_groups AS g
            WHERE g.session_id = $1`,
  retract: `UPDATE mls_groups SET epoch = epoch - 1, last_commit = NULL
            WHERE session_id = $1 AND epoch = $2 AND last_commit = $3`,
  delete: 'DELETE FROM mls_groups WHERE session_id = $1',
  sweep: `DELETE FROM mls_groups WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM mls_groups WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`,
  size: `SELECT count FROM wmp_totals WHERE name = '${TOTALS}'`,
} as const;

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

/**
 * The relay's MLS group state on PostgreSQL, shared by every node. `advance` is one conditional
 * UPDATE under the group row's lock (taken with the batch's locks), so of two commits made in the
 * same epoch, on whatever nodes, exactly one advances. The group count is a totals row, checked in
 * the transaction that creates a group.
 */
export class PostgresMlsGroupStore implements MlsGroupStore {
  readonly maxGroups: number;
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase, options: { maxGroups?: number } = {}) {
    const max = options.maxGroups ?? DEFAULT_MAX_GROUPS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxGroups must be a positive integer');
    this.maxGroups = max;
    this.#db = db;
  }

  async create(group: MlsGroupInput): Promise<CreateGroupResult> {
    this.#open();
    checkGroupInput(group);
    return this.#db.writer.run({
      locks: { groups: [group.sessionId] },
      atomic: true,
      run: async (tx): Promise<CreateGroupResult> => {
        const existing = (await tx.query<Row>(SQL.get, [group.sessionId], 'wmp_group_get')).rows[0];
        if (existing !== undefined) return { status: 'exists', group: record(existing) };
        const totals = await tx.totals();
        if (!totals.fits(TOTALS, 'count', 1, this.maxGroups)) return { status: 'full' };
        const { rows } = await tx.query<Row>(
          SQL.insert,
          [group.sessionId, group.groupId, group.cipherSuite, group.epoch, group.expiresAt],
          'wmp_group_insert',
        );
        if (rows[0] === undefined) {
          // Another node created it since the batch's locks were taken: that one is the group.
          const other = (await tx.query<Row>(SQL.get, [group.sessionId], 'wmp_group_get')).rows[0]!;
          return { status: 'exists', group: record(other) };
        }
        totals.add(TOTALS, 1, 0);
        return { status: 'created', group: record(rows[0]) };
      },
    });
  }

  async get(sessionId: string): Promise<MlsGroupRecord | undefined> {
    this.#open();
    const row = (await this.#db.read<Row>(SQL.get, [sessionId], 'wmp_group_get'))[0];
    return row && record(row);
  }

  async advance(sessionId: string, fromEpoch: number, commitHash: string): Promise<AdvanceResult> {
    this.#open();
    checkEpoch(fromEpoch);
    return this.#db.writer.run({
      locks: { groups: [sessionId] },
      atomic: true,
      run: async (tx): Promise<AdvanceResult> => {
        const { rows } = await tx.query<{ advanced: number | null; epoch: number; last_commit: string | null }>(
          SQL.advance,
          [sessionId, commitHash, fromEpoch],
          'wmp_group_advance',
        );
        const row = rows[0];
        if (row === undefined) return { status: 'missing' };
        if (row.advanced !== null) return { status: 'advanced', epoch: row.advanced };
        if (row.epoch === fromEpoch + 1 && row.last_commit === commitHash)
          return { status: 'repeat', epoch: row.epoch };
        return { status: 'conflict', epoch: row.epoch };
      },
    });
  }

  async retract(sessionId: string, fromEpoch: number, commitHash: string): Promise<boolean> {
    this.#open();
    checkEpoch(fromEpoch);
    return this.#db.writer.run({
      locks: { groups: [sessionId] },
      atomic: true,
      run: async (tx) =>
        (await tx.query(SQL.retract, [sessionId, fromEpoch + 1, commitHash], 'wmp_group_retract')).rowCount === 1,
    });
  }

  async delete(sessionId: string): Promise<void> {
    this.#open();
    await this.#db.writer.run({
      locks: { groups: [sessionId] },
      atomic: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const { rowCount } = await tx.query(SQL.delete, [sessionId], 'wmp_group_delete');
        totals.add(TOTALS, -(rowCount ?? 0), 0);
      },
    });
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#db.writer.run({
      alone: true,
      run: async (tx) => {
        const totals = await tx.totals();
        const removed = (await tx.query(SQL.sweep, [now, n], 'wmp_group_sweep')).rowCount ?? 0;
        totals.add(TOTALS, -removed, 0);
        return removed;
      },
    });
  }

  async size(): Promise<number> {
    this.#open();
    return (await this.#db.read<{ count: number }>(SQL.size, [], 'wmp_group_size'))[0]!.count;
  }

  #open(): void {
    if (this.#db.closed) throw new StoreClosedError();
  }
}
