// One write transaction as operations see it (`WriteTx`), with its running totals (`TxTotals`).
import type pg from 'pg';
import type { Totals } from '../contracts/totals.js';
import type { Connection } from './write-connection.js';
import { advisoryKey, LOCK_KINDS, type LockedRow, type LockKind } from './write-locks.js';

/** Per-transaction state an adapter keeps in memory and writes once, before COMMIT (without waiting). */
export interface TxState {
  beforeCommit?(tx: WriteTx): void;
}

/** A key for the state of an adapter: `tx.state(key)` makes one per transaction. */
export interface TxStateKey<S extends object> {
  readonly name: string;
  create(tx: WriteTx): S;
}

/** The first statement of a transaction that failed, and the unit that sent it. */
export interface Failure {
  readonly error: unknown;
  readonly unit: number | undefined;
}

/**
 * One transaction of the writer, as operations see it: queries, the rows locked for the batch,
 * the running totals, per-adapter state and a journal that undoes in-memory changes when an
 * operation is rolled back to its savepoint.
 */
export class WriteTx {
  readonly strict: boolean;
  readonly #conn: Connection;
  readonly #locked = new Map<LockKind, Map<string, LockedRow>>();
  readonly #states = new Map<TxStateKey<object>, TxState>();
  readonly #journal: Array<() => void> = [];
  readonly #inFlight = new Set<Promise<unknown>>();
  #lockedUpTo = -1;
  #failure: Failure | undefined;
  #unit: number | undefined;
  #totals: Promise<TxTotals> | undefined;

  constructor(conn: Connection, strict: boolean) {
    this.#conn = conn;
    this.strict = strict;
  }

  /** Runs a statement in this transaction. `name` makes it a prepared statement (static SQL only). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>> {
    const config: pg.QueryConfig = { text };
    if (values !== undefined) config.values = values as unknown[];
    if (name !== undefined) config.name = name;
    const unit = this.#unit;
    const result = this.#conn.query<R>(config);
    this.#inFlight.add(result);
    result.then(
      () => this.#inFlight.delete(result),
      (error: unknown) => {
        this.#inFlight.delete(result);
        this.#failure ??= { error, unit };
      },
    );
    return result;
  }

  /**
   * Sends a statement without waiting for it (pipeline mode): a failure fails the transaction.
   * (Promises from `query` are marked handled; a promise derived from one, sent ahead and perhaps
   * never awaited, needs a `.catch` of its own.)
   */
  send(text: string, values?: readonly unknown[], name?: string): void {
    this.query(text, values, name).catch(() => undefined);
  }

  /** Waits until every statement sent so far has been answered. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** @internal The first failed statement since the last savepoint rollback. */
  get failure(): Failure | undefined {
    return this.#failure;
  }

  /** @internal */
  clearFailure(): void {
    this.#failure = undefined;
  }

  /** @internal Statements sent from here on belong to `unit` (for telling which one failed). */
  within(unit: number | undefined): void {
    this.#unit = unit;
  }

  /** Rows locked for the batch (or by `lock`), by key; a key without a row is absent. */
  locked(kind: LockKind): ReadonlyMap<string, LockedRow> {
    return this.#locked.get(kind) ?? new Map();
  }

  /**
   * Locks rows of one kind, in key order. Only in lock order: after this, no kind before it can
   * be locked in this transaction (the batch's locks are taken this way; an `alone` operation
   * uses it for what it found).
   */
  lock(kind: LockKind, keys: Iterable<string>): Promise<ReadonlyMap<string, LockedRow>> {
    const index = LOCK_KINDS.findIndex((k) => k.kind === kind);
    if (index <= this.#lockedUpTo) throw new Error(`lock order: ${kind} after a later kind`);
    this.#lockedUpTo = index;
    const spec = LOCK_KINDS[index]!;
    const names = [...new Set(keys)];
    const rows = new Map<string, LockedRow>();
    this.#locked.set(kind, rows);
    if (names.length === 0) return Promise.resolve(rows);
    const locked = spec.hashed
      ? this.query(spec.lock, [names.map(advisoryKey)], `wmp_lock_${kind}`).then(() => {
          for (const n of names) rows.set(n, { key: n });
          return rows;
        })
      : this.query<LockedRow>(spec.lock, [names], `wmp_lock_${kind}`).then((result) => {
          for (const row of result.rows) rows.set(row.key, row);
          return rows;
        });
    locked.catch(() => undefined);
    return locked;
  }

  /** This transaction's state of an adapter (made on first use, written before COMMIT). */
  state<S extends object>(key: TxStateKey<S>): S {
    let state = this.#states.get(key) as S | undefined;
    if (state === undefined) {
      state = key.create(this);
      this.#states.set(key, state as TxState);
    }
    return state;
  }

  /** Records how to undo an in-memory change, should the operation making it be rolled back. */
  undo(fn: () => void): void {
    this.#journal.push(fn);
  }

  /**
   * The running totals (`wmp_totals`), read with the batch's locks (locked too in strict mode),
   * written last, and checked before COMMIT.
   */
  totals(): Promise<TxTotals> {
    this.#totals ??= (async () => {
      const totals = new TxTotals(this);
      await totals.load(this.strict);
      return totals;
    })();
    return this.#totals;
  }

  /** @internal */
  get mark(): number {
    return this.#journal.length;
  }

  /** @internal Undoes in-memory changes back to `mark`. */
  rollbackTo(mark: number): void {
    while (this.#journal.length > mark) this.#journal.pop()!();
  }

  /** @internal Sends adapter state, the totals and their check, then COMMIT; resolves COMMIT's answer. */
  async commit(): Promise<pg.QueryResult> {
    this.#unit = undefined;
    for (const state of this.#states.values()) state.beforeCommit?.(this);
    if (this.#totals !== undefined) (await this.#totals).write();
    return this.query('COMMIT');
  }
}

interface Decision {
  readonly name: string;
  readonly field: keyof Totals;
  /** The value the decision saw (the start of the transaction plus its own changes so far). */
  readonly base: number;
  readonly add: number;
  readonly limit: number;
  readonly fits: boolean;
}

const CHECK_TOTALS = `SELECT wmp_check_totals(bool_and(
    (d.base + CASE WHEN d.field = 'count' THEN t.count - d.dc - d.sc ELSE t.bytes - d.db - d.sb END + d.add <= d.lim)
    = d.fits))
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[],
              $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[]) AS d(name, field, base, add, lim, fits, sc, sb, dc, db)
  JOIN wmp_totals AS t USING (name)`;

/**
 * The running totals of one transaction. Every writer of every node changes these rows, so they
 * are locked last (updated right before COMMIT, in name order, sent with it) and held only
 * through the commit: the cap checks before that use the values read at the start of the
 * transaction, and each decision is recorded. After the update, one statement checks every
 * decision against the values that were really there (`wmp_check_totals`); if one would have
 * gone the other way, it fails, COMMIT rolls back, and the batch runs again in strict mode, with
 * the totals rows locked before anything is decided. Far from every cap the check always passes;
 * near one it costs one more transaction.
 */
export class TxTotals {
  readonly #tx: WriteTx;
  readonly #start = new Map<string, Totals>();
  readonly #delta = new Map<string, { count: number; bytes: number }>();
  readonly #decisions: Decision[] = [];

  constructor(tx: WriteTx) {
    this.#tx = tx;
  }

  /** @internal */
  async load(strict: boolean): Promise<void> {
    const sql = strict
      ? 'SELECT name, count, bytes FROM wmp_totals ORDER BY name FOR UPDATE'
      : 'SELECT name, count, bytes FROM wmp_totals';
    const { rows } = await this.#tx.query<{ name: string; count: number; bytes: number }>(
      sql,
      [],
      strict ? 'wmp_totals_lock' : 'wmp_totals_read',
    );
    for (const row of rows) this.#start.set(row.name, { count: row.count, bytes: row.bytes });
  }

  /** The totals of `name` as this transaction sees them. */
  get(name: string): Totals {
    const start = this.#start.get(name);
    if (start === undefined) throw new Error(`no totals row ${name}`);
    const delta = this.#delta.get(name);
    return delta === undefined ? start : { count: start.count + delta.count, bytes: start.bytes + delta.bytes };
  }

  /** Whether `field` of `name` plus `add` stays within `limit`; the decision is checked at commit. */
  fits(name: string, field: keyof Totals, add: number, limit: number): boolean {
    const base = this.get(name)[field];
    const fits = base + add <= limit;
    this.record({ name, field, base, add, limit, fits });
    return fits;
  }

  /** Records a decision the caller made with `get` (the same comparison as `fits`). */
  record(decision: Decision): void {
    this.#decisions.push(decision);
    this.#tx.undo(() => {
      this.#decisions.pop();
    });
  }

  add(name: string, count: number, bytes: number): void {
    if (count === 0 && bytes === 0) return;
    this.get(name);
    let d = this.#delta.get(name);
    if (d === undefined) {
      d = { count: 0, bytes: 0 };
      this.#delta.set(name, d);
    }
    d.count += count;
    d.bytes += bytes;
    this.#tx.undo(() => {
      d.count -= count;
      d.bytes -= bytes;
    });
  }

  /** @internal Sends the deltas (in name order) and, unless strict, the check of every decision. */
  write(): void {
    const names = new Set(this.#decisions.map((d) => d.name));
    for (const [name, d] of this.#delta) if (d.count !== 0 || d.bytes !== 0) names.add(name);
    const zero = { count: 0, bytes: 0 };
    for (const name of [...names].sort()) {
      const d = this.#delta.get(name) ?? zero;
      this.#tx.send(
        'UPDATE wmp_totals SET count = count + $2, bytes = bytes + $3 WHERE name = $1',
        [name, d.count, d.bytes],
        'wmp_totals_add',
      );
    }
    if (this.#tx.strict || this.#decisions.length === 0) return;
    const ds = this.#decisions;
    const start = (d: Decision) => this.#start.get(d.name)!;
    const delta = (d: Decision) => this.#delta.get(d.name) ?? zero;
    this.#tx.send(
      CHECK_TOTALS,
      [
        ds.map((d) => d.name),
        ds.map((d) => d.field),
        ds.map((d) => d.base),
        ds.map((d) => d.add),
        ds.map((d) => d.limit),
        ds.map((d) => d.fits),
        ds.map((d) => start(d).count),
        ds.map((d) => start(d).bytes),
        ds.map((d) => delta(d).count),
        ds.map((d) => delta(d).bytes),
      ],
      'wmp_totals_check',
    );
  }
}
