import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Totals } from '../contracts/totals.js';
import { StoreClosedError, StoreWriteError } from '../errors.js';

/** Most operations in one transaction (DESIGN §6). */
export const MAX_WRITE_BATCH = 100;

/**
 * What an operation locks, declared before its transaction starts. The writer takes every lock of
 * a batch first, kind by kind in `LOCK_KINDS` order and each kind in key order, so two nodes'
 * transactions never wait on each other in a cycle (no deadlocks between nodes).
 */
export interface Locks {
  /** Recipients whose queue counter row (`wmp_queues`) is locked; created when missing. */
  readonly queues?: readonly string[];
  /** Session rows (`wmp_sessions`), when they exist. */
  readonly sessions?: readonly string[];
  /** MLS group rows (`mls_groups`), when they exist. */
  readonly groups?: readonly string[];
  /** Transaction-level advisory locks on names (e.g. `kp:<identity>`), for keys that have no row. */
  readonly keys?: readonly string[];
  /**
   * The operation lowers queue counters it did not lock (removals): their rows are locked right
   * before COMMIT, so it never waits for the appends in flight to those queues. Such a lock comes
   * after the batch's first ones: it shares a transaction only with operations that lock no
   * sessions, groups or keys (which come after queues in lock order).
   */
  readonly releases?: boolean;
}

export type LockKind = Exclude<keyof Locks, 'releases'>;

interface LockKindSpec {
  readonly kind: LockKind;
  /** Makes the rows exist (in a short transaction of its own, before the batch): `$1` text[]. */
  readonly ensure?: string;
  /** Locks the rows of `$1` in key order and returns them with their key as `key`. */
  readonly lock: string;
  readonly hashed?: boolean;
}

/**
 * The lock order of every transaction: queues, sessions, groups, advisory keys, then the totals
 * rows by name (last, see `TxTotals`). Nothing waits for a lock in between: what an operation
 * writes is locked here, or taken with SKIP LOCKED. An adapter with rows of its own (the box)
 * adds its kind here, in the place that keeps this order the same for every writer.
 */
const LOCK_KINDS: readonly LockKindSpec[] = [
  {
    kind: 'queues',
    ensure: `INSERT INTO wmp_queues (recipient) SELECT k FROM unnest($1::text[]) AS u(k) ORDER BY k
             ON CONFLICT (recipient) DO NOTHING`,
    lock: `SELECT recipient AS key, next_seq, count, bytes FROM wmp_queues
           WHERE recipient = ANY($1::text[]) ORDER BY recipient FOR UPDATE`,
  },
  {
    kind: 'sessions',
    lock: `SELECT id AS key, pending, record FROM wmp_sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
  },
  {
    kind: 'groups',
    lock: `SELECT session_id AS key FROM mls_groups WHERE session_id = ANY($1::text[]) ORDER BY session_id FOR UPDATE`,
  },
  {
    kind: 'keys',
    lock: `SELECT k AS key, pg_advisory_xact_lock(k) FROM
           (SELECT DISTINCT k FROM unnest($1::bigint[]) AS u(k) ORDER BY k) AS s`,
    hashed: true,
  },
];

/** A locked row, as the lock statement returned it (`key` is the locked key). */
export type LockedRow = Readonly<Record<string, unknown>> & { readonly key: string };

/** One operation of a batch. */
export interface WriteOp<T> {
  readonly locks?: Locks;
  /**
   * Runs without a savepoint: it decides before it writes (a refusal throws before any
   * statement), and its statements fail only when the database does. If one does fail, the
   * batch is run again with this operation in a savepoint of its own, so it still fails alone.
   */
  readonly atomic?: boolean;
  /**
   * Runs in a transaction of its own (sweeps): it may lock what it finds (`tx.lock`), being the
   * first to lock anything in its transaction.
   */
  readonly alone?: boolean;
  run(tx: WriteTx): Promise<T>;
}

export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * Operations of one kind written together with set-based statements (`INSERT ... SELECT FROM
 * unnest(...)`): every item of a batch of this kind goes to one `run`, at the place of the first.
 * `prepare` sends what can go with the batch's locks (reads, or writes whose result `run` needs),
 * in the same round trip; `run` decides and sends its writes without waiting for them. A group is
 * atomic in the sense of `WriteOp.atomic`: a refused item is settled with its error and writes
 * nothing; when one of its statements fails, the batch runs again with each item on its own, in
 * its own savepoint.
 */
export interface WriteGroup<I, T, P = unknown> {
  readonly name: string;
  prepare?(tx: WriteTx, items: readonly I[]): P;
  run(tx: WriteTx, items: readonly I[], prepared: P | undefined): Promise<Settled<T>[]>;
}

export interface WriterStats {
  /** Transactions committed. */
  readonly transactions: number;
  /** Operations settled by committed transactions (succeeded or refused). */
  readonly operations: number;
  /** Batches whose transaction could not be committed: every caller in them got `StoreWriteError`. */
  readonly failures: number;
  /** Transactions run again (a stale total near a cap, a failed statement isolated, a deadlock). */
  readonly retries: number;
}

/** Per-transaction state an adapter keeps in memory and writes once, before COMMIT (without waiting). */
export interface TxState {
  beforeCommit?(tx: WriteTx): void;
}

/** A key for the state of an adapter: `tx.state(key)` makes one per transaction. */
export interface TxStateKey<S extends object> {
  readonly name: string;
  create(tx: WriteTx): S;
}

interface Pending {
  readonly op: WriteOp<unknown> | undefined;
  readonly group: WriteGroup<unknown, unknown> | undefined;
  readonly item: unknown;
  readonly locks: Locks | undefined;
  readonly alone: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Unit {
  readonly id: number;
  readonly op: WriteOp<unknown> | undefined;
  readonly group: WriteGroup<unknown, unknown> | undefined;
  /** Indexes into the batch. */
  readonly members: number[];
}

/** Why an attempt must be run again. */
type Retry =
  | { readonly retry: 'isolate'; readonly unit: number }
  | { readonly retry: 'strict' }
  | { readonly retry: 'again'; readonly cause: unknown };

const MAX_ATTEMPTS = 6;

/** The SQLSTATE `wmp_check_totals` raises when a decision made on the totals read would have gone otherwise. */
const STALE_TOTALS = 'WMP01';

/** The writer's connection settings (see `PostgresDatabaseOptions`). */
export interface WriterConnectionOptions {
  readonly connect: () => Promise<pg.Client>;
  readonly pipeline: boolean;
}

/** A pg Client used one transaction at a time; without pipeline mode, queries are chained here. */
class Connection {
  readonly client: pg.Client;
  readonly pipeline: boolean;
  broken = false;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(client: pg.Client, pipeline: boolean) {
    this.client = client;
    this.pipeline = pipeline;
    client.on('error', () => {
      this.broken = true;
    });
    client.on('end', () => {
      this.broken = true;
    });
  }

  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    if (this.pipeline) return this.client.query<R>(config);
    // One query on the wire at a time (pg warns when queries queue up in a non-pipelined client).
    const result = this.#tail.then(() => this.client.query<R>(config));
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  end(): Promise<void> {
    this.broken = true;
    return this.client.end().catch(() => undefined);
  }
}

/** Advisory lock keys: the first 8 bytes of SHA-256 of the name, as a signed bigint. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

const sqlState = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** A connection-level failure (not a statement's error): the whole transaction is lost. */
function isConnectionError(error: unknown): boolean {
  const code = sqlState(error);
  return code === undefined || /^(08|57P)/.test(code);
}

const isRetryable = (error: unknown): boolean => {
  const code = sqlState(error);
  return code === '40P01' || code === '40001';
};

/** The first statement of a transaction that failed, and the unit that sent it. */
interface Failure {
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

/**
 * The single writer of one node (DESIGN §3 "Cluster", §6): operations queued in the same turn of
 * the event loop (and any arriving while a transaction is in flight) are written in one
 * transaction of at most `maxBatch` on one dedicated connection, and each caller's promise
 * settles only after COMMIT returned (with `synchronous_commit=on`, on disk). Each operation
 * runs in its own savepoint unless it is atomic by itself; one that fails (a refusal) is rolled
 * back alone and the rest of the batch commits. A failed COMMIT, or a lost connection, rejects
 * every caller of the batch with `StoreWriteError` (after a lost connection the outcome of a
 * COMMIT in flight is unknown: appends are idempotent by message id, so a retry is safe). The
 * connection is opened again for the next batch: the writer recovers by itself when the server
 * is back.
 *
 * In pipeline mode a batch of set-based operations is two round trips: BEGIN, the locks, the
 * totals and every group's reads in one; the writes, the totals, their check and COMMIT in the
 * other.
 */
export class PostgresWriter {
  readonly #options: WriterConnectionOptions;
  readonly #maxBatch: number;
  readonly #pending: Pending[] = [];
  readonly #idle: Array<() => void> = [];
  /** Keys whose rows are known to exist (queue counter rows are never deleted). */
  readonly #known = new Map<LockKind, Set<string>>();
  #conn: Connection | undefined;
  #scheduled = false;
  #flushing = false;
  #closed = false;
  #stats = { transactions: 0, operations: 0, failures: 0, retries: 0 };

  constructor(options: WriterConnectionOptions, maxBatch = MAX_WRITE_BATCH) {
    if (!Number.isSafeInteger(maxBatch) || maxBatch < 1 || maxBatch > MAX_WRITE_BATCH) {
      throw new RangeError(`maxBatch must be 1..${MAX_WRITE_BATCH}`);
    }
    this.#options = options;
    this.#maxBatch = maxBatch;
  }

  get stats(): WriterStats {
    return { ...this.#stats };
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Opens the connection now (at start, so a bad setting shows before the first write). */
  async connect(): Promise<void> {
    await this.#connection();
  }

  /** Queues an operation for the next transaction; settles after COMMIT. */
  run<T>(op: WriteOp<T>): Promise<T> {
    return this.#queue(op as WriteOp<unknown>, undefined, undefined, op.locks, op.alone === true) as Promise<T>;
  }

  /** Queues one item of a set-based group; settles after COMMIT. */
  group<I, T, P>(group: WriteGroup<I, T, P>, item: I, locks: Locks): Promise<T> {
    return this.#queue(undefined, group as WriteGroup<unknown, unknown>, item, locks, false) as Promise<T>;
  }

  /** Resolves when everything queued so far is committed (or failed). */
  drain(): Promise<void> {
    if (this.#pending.length === 0 && !this.#scheduled && !this.#flushing) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Refuses new operations, waits for the queued ones, closes the connection. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.drain();
    await this.#conn?.end();
    this.#conn = undefined;
  }

  #queue(
    op: WriteOp<unknown> | undefined,
    group: WriteGroup<unknown, unknown> | undefined,
    item: unknown,
    locks: Locks | undefined,
    alone: boolean,
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return new Promise((resolve, reject) => {
      this.#pending.push({ op, group, item, locks, alone, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    // setImmediate, not a microtask: writes from every I/O callback of this loop turn join.
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    this.#flushing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#take();
        const outcomes = await this.#write(batch);
        for (let i = 0; i < batch.length; i++) {
          const outcome = outcomes[i]!;
          if (outcome.ok) batch[i]!.resolve(outcome.value);
          else batch[i]!.reject(outcome.error);
        }
        // Let callbacks of this turn queue more before the next transaction.
        if (this.#pending.length > 0) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#flushing = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /**
   * The next batch: up to `maxBatch` operations, or one `alone` operation by itself; it ends
   * before an operation whose late queue locks (`releases`) would come after another's sessions,
   * groups or keys (or the other way round), which keeps every transaction in lock order.
   */
  #take(): Pending[] {
    if (this.#pending[0]!.alone) return this.#pending.splice(0, 1);
    let n = 0;
    let releases = false;
    let later = false;
    while (n < this.#pending.length && n < this.#maxBatch && !this.#pending[n]!.alone) {
      const locks = this.#pending[n]!.locks;
      const r = locks?.releases === true;
      const l = (locks?.sessions?.length ?? 0) + (locks?.groups?.length ?? 0) + (locks?.keys?.length ?? 0) > 0;
      if ((r && later) || (l && releases)) break;
      releases ||= r;
      later ||= l;
      n++;
    }
    return this.#pending.splice(0, n);
  }

  async #connection(): Promise<Connection> {
    if (this.#conn !== undefined && !this.#conn.broken) return this.#conn;
    const old = this.#conn;
    this.#conn = undefined;
    void old?.end();
    const client = await this.#options.connect();
    this.#conn = new Connection(client, this.#options.pipeline);
    return this.#conn;
  }

  async #write(batch: readonly Pending[]): Promise<Settled<unknown>[]> {
    const units = unitsOf(batch);
    const isolated = new Set<number>();
    let strict = false;
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt > 0) this.#stats.retries++;
      let result: Settled<unknown>[] | Retry;
      try {
        result = await this.#attempt(batch, units, isolated, strict);
      } catch (error) {
        this.#stats.failures++;
        const failure = new StoreWriteError(error);
        return batch.map(() => ({ ok: false, error: failure }));
      }
      if (Array.isArray(result)) {
        this.#stats.transactions++;
        this.#stats.operations += batch.length;
        return result;
      }
      if (result.retry === 'isolate') isolated.add(result.unit);
      else if (result.retry === 'strict') strict = true;
      else lastError = result.cause;
    }
    this.#stats.failures++;
    const failure = new StoreWriteError(lastError ?? new Error('transaction retried too often'));
    return batch.map(() => ({ ok: false, error: failure }));
  }

  /** One transaction over the batch; throws when it cannot commit (every caller fails). */
  async #attempt(
    batch: readonly Pending[],
    units: readonly Unit[],
    isolated: ReadonlySet<number>,
    strict: boolean,
  ): Promise<Settled<unknown>[] | Retry> {
    const conn = await this.#connection();
    const tx = new WriteTx(conn, strict);
    const outcomes: Settled<unknown>[] = new Array(batch.length);
    try {
      await this.#ensure(tx, batch);
      tx.send('BEGIN');
      const locks = this.#lock(tx, batch);
      // An `alone` operation locks rows itself: it reads (or locks) the totals after them, if at all.
      if (!batch[0]!.alone) tx.totals().catch(() => undefined);
      const prepared = new Map<number, unknown>();
      for (const unit of units) {
        if (unit.group?.prepare === undefined || isolated.has(unit.id)) continue;
        tx.within(unit.id);
        prepared.set(unit.id, unit.group.prepare(tx, itemsOf(batch, unit)));
        tx.within(undefined);
      }
      if (await locks) {
        await tx.query('ROLLBACK');
        return { retry: 'again', cause: new Error('locked rows missing') };
      }
      for (const unit of units) {
        const retry = await this.#runUnit(tx, batch, unit, isolated.has(unit.id), prepared, outcomes);
        if (retry !== undefined) {
          await tx.query('ROLLBACK');
          return retry;
        }
      }
      const commit = await tx.commit().catch((error: unknown) => {
        if (isConnectionError(error)) throw error;
        return undefined;
      });
      // COMMIT of a transaction that failed answers ROLLBACK, not an error.
      if (commit?.command === 'COMMIT') return outcomes;
      await tx.settled();
      const failure = tx.failure;
      if (failure === undefined) throw new Error('transaction rolled back at COMMIT');
      if (sqlState(failure.error) === STALE_TOTALS) return { retry: 'strict' };
      if (isRetryable(failure.error)) return { retry: 'again', cause: failure.error };
      if (failure.unit !== undefined && !isConnectionError(failure.error))
        return { retry: 'isolate', unit: failure.unit };
      throw failure.error;
    } catch (error) {
      // Outside a transaction ROLLBACK only warns: safe whatever point the attempt reached.
      if (!conn.broken) await conn.query({ text: 'ROLLBACK' }).catch(() => undefined);
      if (!conn.broken && isRetryable(error)) return { retry: 'again', cause: error };
      throw error;
    }
  }

  /**
   * Makes the rows that must exist before they are locked (new recipients), in a short transaction
   * of its own that need not wait for the disk: what commits after it depends on it and flushes it.
   */
  async #ensure(tx: WriteTx, batch: readonly Pending[]): Promise<void> {
    for (const spec of LOCK_KINDS) {
      if (spec.ensure === undefined) continue;
      let known = this.#known.get(spec.kind);
      if (known === undefined) {
        known = new Set();
        this.#known.set(spec.kind, known);
      }
      const unknown = new Set<string>();
      for (const p of batch) for (const k of p.locks?.[spec.kind] ?? []) if (!known.has(k)) unknown.add(k);
      if (unknown.size === 0) continue;
      tx.send('BEGIN');
      tx.send('SET LOCAL synchronous_commit = off');
      tx.send(spec.ensure, [[...unknown]], `wmp_ensure_${spec.kind}`);
      await tx.query('COMMIT');
      if (tx.failure !== undefined) throw tx.failure.error;
      if (known.size > 100_000) known.clear();
      for (const k of unknown) known.add(k);
    }
  }

  /** Sends one lock statement per kind; resolves true when a row that should exist was missing. */
  async #lock(tx: WriteTx, batch: readonly Pending[]): Promise<boolean> {
    const sent: Array<Promise<boolean>> = [];
    for (const spec of LOCK_KINDS) {
      const keys = new Set<string>();
      for (const p of batch) for (const k of p.locks?.[spec.kind] ?? []) keys.add(k);
      if (keys.size === 0) continue;
      const rows = tx.lock(spec.kind, keys);
      if (spec.ensure === undefined) {
        sent.push(rows.then(() => false));
        continue;
      }
      sent.push(
        rows.then((found) => {
          let missing = false;
          for (const k of keys) {
            if (found.has(k)) continue;
            // Lost in a server crash (its insert did not wait for the disk): made again on the retry.
            missing = true;
            this.#known.get(spec.kind)?.delete(k);
          }
          return missing;
        }),
      );
    }
    return (await Promise.all(sent)).some(Boolean);
  }

  /** Runs one unit; settles its members in `outcomes`, or says why the attempt must start over. */
  async #runUnit(
    tx: WriteTx,
    batch: readonly Pending[],
    unit: Unit,
    isolated: boolean,
    prepared: ReadonlyMap<number, unknown>,
    outcomes: Settled<unknown>[],
  ): Promise<Retry | undefined> {
    const savepoint = isolated || (unit.op !== undefined && unit.op.atomic !== true);
    if (savepoint) {
      // Earlier units' statements answer first, so a failure is theirs, not this one's.
      await tx.settled();
      if (tx.failure !== undefined) return this.#failed(tx.failure);
    }
    tx.within(unit.id);
    try {
      if (unit.group !== undefined && isolated) {
        // Each item alone, in a savepoint: the one whose statement fails fails by itself.
        for (const index of unit.members) {
          const one: Unit = { ...unit, members: [index] };
          const settled = await this.#inSavepoint(tx, () => this.#runGroup(tx, batch, one, undefined));
          outcomes[index] = settled.ok ? settled.value[0]! : settled;
        }
        return undefined;
      }
      const run =
        unit.group !== undefined
          ? () => this.#runGroup(tx, batch, unit, prepared.get(unit.id))
          : async () => [{ ok: true, value: await unit.op!.run(tx) } as Settled<unknown>];
      if (savepoint) {
        const settled = await this.#inSavepoint(tx, run);
        unit.members.forEach((index, i) => {
          outcomes[index] = settled.ok ? settled.value[i]! : settled;
        });
        return undefined;
      }
      const mark = tx.mark;
      try {
        const values = await run();
        unit.members.forEach((index, i) => {
          outcomes[index] = values[i]!;
        });
        return undefined;
      } catch (error) {
        tx.rollbackTo(mark);
        if (tx.failure === undefined) {
          // Refused before writing anything: nothing to roll back in the database.
          for (const index of unit.members) outcomes[index] = { ok: false, error };
          return undefined;
        }
        return this.#failed(tx.failure);
      }
    } finally {
      tx.within(undefined);
    }
  }

  #failed(failure: Failure): Retry {
    if (isConnectionError(failure.error)) throw failure.error;
    if (isRetryable(failure.error)) return { retry: 'again', cause: failure.error };
    if (failure.unit === undefined) throw failure.error;
    return { retry: 'isolate', unit: failure.unit };
  }

  #runGroup(tx: WriteTx, batch: readonly Pending[], unit: Unit, prepared: unknown): Promise<Settled<unknown>[]> {
    const group = unit.group!;
    const items = itemsOf(batch, unit);
    return group.run(tx, items, prepared ?? group.prepare?.(tx, items));
  }

  /** Runs `fn` in a savepoint: rolled back alone (database and journal) when it throws or a statement fails. */
  async #inSavepoint<T>(tx: WriteTx, fn: () => Promise<T>): Promise<Settled<T>> {
    const mark = tx.mark;
    tx.send('SAVEPOINT op');
    let outcome: Settled<T>;
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    await tx.settled();
    const failure = tx.failure;
    if (outcome.ok && failure === undefined) {
      tx.send('RELEASE SAVEPOINT op');
      return outcome;
    }
    tx.rollbackTo(mark);
    if (failure !== undefined && (isConnectionError(failure.error) || isRetryable(failure.error))) throw failure.error;
    await tx.query('ROLLBACK TO SAVEPOINT op');
    tx.send('RELEASE SAVEPOINT op');
    tx.clearFailure();
    // A statement of this operation failed: that is a write error of its own (the driver's error is the cause).
    return failure !== undefined ? { ok: false, error: new StoreWriteError(failure.error) } : outcome;
  }
}

function itemsOf(batch: readonly Pending[], unit: Unit): unknown[] {
  return unit.members.map((index) => batch[index]!.item);
}

/** The batch as units: each group once (at its first item), every other operation by itself. */
function unitsOf(batch: readonly Pending[]): Unit[] {
  const units: Unit[] = [];
  const groups = new Map<WriteGroup<unknown, unknown>, Unit>();
  batch.forEach((p, index) => {
    if (p.group === undefined) {
      units.push({ id: units.length, op: p.op, group: undefined, members: [index] });
      return;
    }
    const unit = groups.get(p.group);
    if (unit !== undefined) unit.members.push(index);
    else {
      const created: Unit = { id: units.length, op: undefined, group: p.group, members: [index] };
      groups.set(p.group, created);
      units.push(created);
    }
  });
  return units;
}
