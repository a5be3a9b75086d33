import {
  checkSessionStoreLimits,
  isPending,
  type SessionChange,
  type SessionCounts,
  type SessionRecord,
  type SessionStore,
  type SessionStoreLimits,
  sessionCapRefusal,
} from '@wmp/session';
import { decodeSession, encodeSession } from '../contracts/session-json.js';
import { StoreClosedError, StoreInputError } from '../errors.js';
import type { PostgresDatabase } from './postgres-database.js';
import type { TxStateKey, TxTotals, WriteTx } from './write-tx.js';

/** Rows one sweep transaction deletes: a long sweep is several short transactions. */
const SWEEP_BATCH = 1000;

const SQL = {
  get: 'SELECT record FROM wmp_sessions WHERE id = $1',
  counts: "SELECT name, count FROM wmp_totals WHERE name IN ('sessions', 'pending_sessions')",
  insert: `INSERT INTO wmp_sessions (id, expires_at, pending, record) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING RETURNING id`,
  update: 'UPDATE wmp_sessions SET expires_at = $2, pending = $3, record = $4 WHERE id = $1',
  delete: 'DELETE FROM wmp_sessions WHERE id = $1 RETURNING pending',
  // A session another node holds locked right now is left for the next sweep.
  sweep: `DELETE FROM wmp_sessions WHERE id IN
          (SELECT id FROM wmp_sessions WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING pending`,
} as const;

/** The records of the sessions this transaction holds locked, as its operations changed them. */
class SessionTx {
  readonly #tx: WriteTx;
  /** null: deleted in this transaction. */
  readonly #records = new Map<string, SessionRecord | null>();

  constructor(tx: WriteTx) {
    this.#tx = tx;
  }

  get(id: string): SessionRecord | undefined {
    const known = this.#records.get(id);
    if (known !== undefined) return known ?? undefined;
    const row = this.#tx.locked('sessions').get(id);
    if (row === undefined) return undefined;
    const record = decodeSession(row['record'] as string);
    this.#records.set(id, record);
    return record;
  }

  set(id: string, record: SessionRecord | null): void {
    const had = this.#records.has(id);
    const before = this.#records.get(id);
    this.#records.set(id, record);
    this.#tx.undo(() => {
      if (had) this.#records.set(id, before!);
      else this.#records.delete(id);
    });
  }
}

const SESSION_TX: TxStateKey<SessionTx> = { name: 'sessions', create: (tx) => new SessionTx(tx) };

/**
 * `SessionStore` of @wmp/session on PostgreSQL, shared by every node of a cluster
 * (docs/architecture.md, "Storage"). A record is a JSON row (token hashes only). Every write is one
 * operation of the node's writer, under the session row's lock (`SELECT ... FOR UPDATE`, taken with
 * the batch's other locks), so an `update` reads the current record, applies the change in JS and
 * writes the result with no other node in between: a resumption token or a challenge is used once,
 * whichever nodes race for it. The caps are checked against the totals rows in the same
 * transaction. Reads go to the pool; nothing is cached, so every node reads what the last commit
 * wrote.
 */
export class PostgresSessionStore implements SessionStore {
  readonly limits: SessionStoreLimits;
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase, limits: Partial<SessionStoreLimits> = {}) {
    this.limits = checkSessionStoreLimits(limits);
    this.#db = db;
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    this.#open();
    const rows = await this.#db.read<{ record: string }>(SQL.get, [id], 'wmp_session_get');
    return rows[0] === undefined ? undefined : decodeSession(rows[0].record);
  }

  async create(session: SessionRecord): Promise<void> {
    this.#open();
    const text = encodeSession(session);
    const id = session.id;
    await this.#db.writer.run({
      locks: { sessions: [id] },
      atomic: true,
      run: async (tx) => {
        const state = tx.state(SESSION_TX);
        if (state.get(id) !== undefined) throw new RangeError('session id exists');
        const totals = await tx.totals();
        this.#checkCaps(totals, undefined, session);
        const pending = isPending(session);
        const inserted = await tx.query(SQL.insert, [id, session.expiresAt, pending, text], 'wmp_session_insert');
        // Created by another node since the lock was taken (ids are random: a bug if ever).
        if (inserted.rowCount === 0) throw new RangeError('session id exists');
        totals.add('sessions', 1, 0);
        if (pending) totals.add('pending_sessions', 1, 0);
        state.set(id, decodeSession(text));
      },
    });
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    this.#open();
    return this.#db.writer.run({
      locks: { sessions: [id] },
      atomic: true,
      run: async (tx) => {
        const state = tx.state(SESSION_TX);
        const current = state.get(id);
        if (current === undefined) return undefined;
        // Pure and synchronous: run here, under the row's lock; a throw refuses, nothing is written.
        const next = change(current);
        if (next === current) return current;
        if (next.id !== id) throw new StoreInputError('a change may not change the id');
        const text = encodeSession(next);
        const totals = await tx.totals();
        this.#checkCaps(totals, current, next);
        const [was, is] = [isPending(current), isPending(next)];
        await tx.query(SQL.update, [id, next.expiresAt, is, text], 'wmp_session_update');
        if (was !== is) totals.add('pending_sessions', is ? 1 : -1, 0);
        const stored = decodeSession(text);
        state.set(id, stored);
        return stored;
      },
    });
  }

  async delete(id: string): Promise<void> {
    this.#open();
    await this.#db.writer.run({
      locks: { sessions: [id] },
      atomic: true,
      run: async (tx) => {
        const state = tx.state(SESSION_TX);
        if (state.get(id) === undefined) return;
        const totals = await tx.totals();
        const { rows } = await tx.query<{ pending: boolean }>(SQL.delete, [id], 'wmp_session_delete');
        if (rows[0] !== undefined) {
          totals.add('sessions', -1, 0);
          if (rows[0].pending) totals.add('pending_sessions', -1, 0);
        }
        state.set(id, null);
      },
    });
  }

  async sweep(now: number): Promise<number> {
    this.#open();
    let total = 0;
    for (;;) {
      const removed = await this.#db.writer.run({
        alone: true,
        run: async (tx) => {
          const { rows } = await tx.query<{ pending: boolean }>(SQL.sweep, [now, SWEEP_BATCH], 'wmp_session_sweep');
          if (rows.length === 0) return 0;
          const totals = await tx.totals();
          totals.add('sessions', -rows.length, 0);
          totals.add('pending_sessions', -rows.filter((r) => r.pending).length, 0);
          return rows.length;
        },
      });
      total += removed;
      if (removed < SWEEP_BATCH) return total;
    }
  }

  async counts(): Promise<SessionCounts> {
    this.#open();
    let sessions = 0;
    let pending = 0;
    for (const row of await this.#db.read<{ name: string; count: number }>(SQL.counts, [], 'wmp_session_counts')) {
      if (row.name === 'sessions') sessions = row.count;
      else pending = row.count;
    }
    return { sessions, pending };
  }

  /** `sessionCapRefusal` on the transaction's totals, each comparison recorded for the check at COMMIT. */
  #checkCaps(totals: TxTotals, previous: SessionRecord | undefined, next: SessionRecord): void {
    const sessions = totals.get('sessions').count;
    const pending = totals.get('pending_sessions').count;
    const refusal = sessionCapRefusal(this.limits, { sessions, pending }, previous, next);
    if (previous === undefined) {
      totals.record({
        name: 'sessions',
        field: 'count',
        base: sessions,
        add: 1,
        limit: this.limits.maxSessions,
        fits: refusal?.cap !== 'sessions',
      });
    }
    if (refusal?.cap !== 'sessions' && isPending(next) && !(previous !== undefined && isPending(previous))) {
      totals.record({
        name: 'pending_sessions',
        field: 'count',
        base: pending,
        add: 1,
        limit: this.limits.maxPendingSessions,
        fits: refusal === undefined,
      });
    }
    if (refusal !== undefined) throw refusal;
  }

  #open(): void {
    if (this.#db.closed) throw new StoreClosedError();
  }
}
