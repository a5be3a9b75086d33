import { StoreClosedError } from '../errors.js';
import { writeFailure } from './postgres-failures.js';
import { isConnectionError, isRetryable, STALE_TOTALS, sqlState } from './postgres-sqlstate.js';
import { Connection, type WriterConnectionOptions } from './write-connection.js';
import { LOCK_KINDS, type LockKind, type Locks } from './write-locks.js';
import {
  itemsOf,
  type Pending,
  type Retry,
  runUnit,
  type Settled,
  type Unit,
  unitsOf,
  type WriteGroup,
  type WriteOp,
} from './write-ops.js';
import { WriteTx } from './write-tx.js';

/** Most operations in one transaction (docs/architecture.md, "Storage"). */
export const MAX_WRITE_BATCH = 100;

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

const MAX_ATTEMPTS = 6;

/**
 * The single writer of one node (docs/architecture.md, "Storage"): operations queued in the same
 * turn of the event loop (and any arriving while a transaction is in flight) are written in one
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
        const failure = writeFailure(error);
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
    const failure = writeFailure(lastError ?? new Error('transaction retried too often'));
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
        const retry = await runUnit(tx, batch, unit, isolated.has(unit.id), prepared, outcomes);
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
}
