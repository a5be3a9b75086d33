import type { Pool, PoolClient } from 'pg';
import { RelayServerError } from '../../errors.js';
import { StoreClosedError, StoreWriteError } from '../errors.js';
import { writeFailure } from './postgres-failures.js';

/** Most operations in one transaction (docs/architecture.md, "Storage"). */
export const MAX_BOX_BATCH = 100;

/** A statement run as a named prepared statement (parsed once per connection). */
export interface BoxStatement {
  readonly name: string;
  readonly text: string;
}

/** The transaction a box write runs in: every box writer already holds the box totals row. */
export interface BoxTx {
  query<R>(statement: BoxStatement, values: readonly unknown[]): Promise<R[]>;
  /** False when the batch runs again after a `BoxFastPathError`: operations take their plain path. */
  readonly fast: boolean;
  /** The tags of this operation and of the ones after it in this transaction, in order. */
  upcoming(): readonly unknown[];
  /** State kept for this transaction only, made on first use. */
  local<T>(key: object, make: () => T): T;
  /** The state `local` made for `key` in this transaction, if any. */
  peek<T>(key: object): T | undefined;
  /** Runs `fn` after the last operation, before COMMIT (a throw fails the transaction like an operation's). */
  beforeCommit(fn: () => Promise<void>): void;
}

/**
 * Thrown by an operation whose fast path failed (a statement that served several operations at
 * once): the failure cannot be pinned on one caller, so the writer rolls back and runs the whole
 * batch again with `tx.fast` false, where a failure is the failing operation's own.
 */
export class BoxFastPathError extends RelayServerError {
  declare readonly code: 'ERR_BOX_FAST_PATH';
  constructor(cause: unknown) {
    super('ERR_BOX_FAST_PATH', 'box fast path failed', { cause });
    this.name = 'BoxFastPathError';
  }
}

export interface BoxWriterStats {
  /** Transactions committed. */
  readonly transactions: number;
  /** Operations that ran inside committed transactions. */
  readonly operations: number;
  /** Operations that threw (rejected alone, the rest of their batch ran again without them). */
  readonly refused: number;
  /** Batches run again without the fast path after a `BoxFastPathError`. */
  readonly slowRetries: number;
  /** Transactions that could not commit (BEGIN, the lock, ROLLBACK or COMMIT failed): every caller in them was rejected. */
  readonly failures: number;
}

interface Pending {
  readonly op: (tx: BoxTx) => Promise<unknown>;
  readonly tag: unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Starts a box transaction: BEGIN, its timeouts and the box totals row's lock in one round trip
 * (the simple protocol takes several statements). The lock is a statement of its own on purpose:
 * under READ COMMITTED each later statement reads a snapshot taken after the lock was granted, so
 * it sees everything the previous holder committed (a statement that waited for a lock inside
 * itself would read older rows). `lock_timeout` bounds the wait for another node's batch;
 * `idle_in_transaction_session_timeout` makes the server end the transaction of a node that
 * stopped talking while it held the lock (a partition, a stopped process), so the others go on.
 */
function beginLocked(lockTimeoutMs: number, idleTimeoutMs: number): string {
  return `BEGIN; SET LOCAL lock_timeout = ${lockTimeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${idleTimeoutMs};
    SELECT 1 FROM ohan_box_totals WHERE id = 1 FOR UPDATE`;
}

export interface BoxWriterOptions {
  /** Operations per transaction, 1..100 (default 100). */
  readonly maxBatch?: number;
  /** Longest wait for the box lock (another node's batch) before the batch fails (default 10 s). */
  readonly lockTimeoutMs?: number;
  /** Longest silence of this node inside a transaction before the server ends it (default 10 s). */
  readonly idleInTransactionTimeoutMs?: number;
}

function checkMs(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${what} must be a positive integer`);
  return value;
}

/**
 * The box's writer on PostgreSQL: operations (publish, delivered, sweep) queued in the same turn of
 * the event loop, or while the previous transaction runs, are written in one transaction of at
 * most `maxBatch`, in the order they were queued, on one pooled connection; each caller's promise
 * settles after COMMIT returned. Every transaction first locks the box totals row, so box writes
 * from every node take turns and no two can deadlock.
 *
 * An operation must leave nothing behind when it decides not to write (a refused publish writes
 * nothing in the first place). One that throws fails the transaction (PostgreSQL aborts it): it
 * is rolled back, that caller alone is rejected (`StoreWriteError`, the driver's error as
 * `cause`), and the other operations of the batch run again in a new transaction; a
 * `BoxFastPathError` instead runs the whole batch again with `tx.fast` false. When the connection
 * itself fails (BEGIN, the lock, ROLLBACK or COMMIT), everyone in the batch is rejected.
 */
export class BoxWriter {
  readonly #pool: Pool;
  readonly #maxBatch: number;
  readonly #begin: string;
  readonly #pending: Pending[] = [];
  readonly #idle: Array<() => void> = [];
  #running = false;
  #closed = false;
  #stats = { transactions: 0, operations: 0, refused: 0, slowRetries: 0, failures: 0 };

  constructor(pool: Pool, options: BoxWriterOptions = {}) {
    const maxBatch = options.maxBatch ?? MAX_BOX_BATCH;
    if (!Number.isSafeInteger(maxBatch) || maxBatch < 1 || maxBatch > MAX_BOX_BATCH) {
      throw new RangeError(`maxBatch must be 1..${MAX_BOX_BATCH}`);
    }
    this.#pool = pool;
    this.#maxBatch = maxBatch;
    this.#begin = beginLocked(
      checkMs(options.lockTimeoutMs ?? 10_000, 'lockTimeoutMs'),
      checkMs(options.idleInTransactionTimeoutMs ?? 10_000, 'idleInTransactionTimeoutMs'),
    );
  }

  get stats(): BoxWriterStats {
    return { ...this.#stats };
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Queues `op` for the next transaction; resolves with its result once that committed. `tag` is
   * what `tx.upcoming()` shows of it, to itself and to the operations before it in its transaction.
   */
  run<T>(op: (tx: BoxTx) => Promise<T>, tag?: unknown): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ op, tag, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#running) {
        this.#running = true;
        // setImmediate, not a microtask: writes arriving from other I/O callbacks of this turn join the batch.
        setImmediate(() => void this.#loop());
      }
    });
  }

  /** Refuses new operations and waits for the queued ones. */
  async close(): Promise<void> {
    this.#closed = true;
    if (!this.#running) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  async #loop(): Promise<void> {
    while (this.#pending.length > 0) await this.#write(this.#pending.splice(0, this.#maxBatch));
    this.#running = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #write(batch: Pending[]): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#fail(batch, error);
      return;
    }
    let broken: Error | undefined;
    let todo = batch;
    let fast = true;
    try {
      while (todo.length > 0) {
        await client.query(this.#begin);
        const tx = transaction(client, fast, todo);
        const values: unknown[] = [];
        let failed = -1;
        let failure: unknown;
        for (const [i, item] of todo.entries()) {
          tx.at = i;
          try {
            values.push(await item.op(tx));
          } catch (error) {
            failed = i;
            failure = error;
            break;
          }
        }
        if (failed < 0) {
          try {
            for (const fn of tx.hooks) await fn();
          } catch (error) {
            failed = todo.length;
            failure = error;
          }
        }
        if (failed >= 0) {
          await client.query('ROLLBACK');
          if (failure instanceof BoxFastPathError && fast) {
            this.#stats.slowRetries++;
            fast = false;
          } else if (failed < todo.length) {
            this.#stats.refused++;
            todo[failed]!.reject(failure instanceof StoreWriteError ? failure : writeFailure(failure));
            todo = todo.filter((_, i) => i !== failed);
          } else {
            throw failure;
          }
          continue;
        }
        const commit = await client.query('COMMIT');
        // COMMIT of a transaction the server had already aborted answers ROLLBACK.
        if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
        this.#stats.transactions++;
        this.#stats.operations += todo.length;
        for (const [i, item] of todo.entries()) item.resolve(values[i]);
        todo = [];
      }
    } catch (error) {
      // The connection failed or is unusable: nothing of this transaction is on disk.
      broken = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      this.#fail(todo, error);
    } finally {
      client.release(broken);
    }
  }

  #fail(batch: readonly Pending[], error: unknown): void {
    this.#stats.failures++;
    const failure = writeFailure(error);
    for (const item of batch) item.reject(failure);
  }
}

interface Transaction extends BoxTx {
  /** Index in `todo` of the operation running. */
  at: number;
  readonly hooks: (() => Promise<void>)[];
}

function transaction(client: PoolClient, fast: boolean, todo: readonly Pending[]): Transaction {
  const state = new Map<object, unknown>();
  const tx: Transaction = {
    at: 0,
    hooks: [],
    fast,
    async query<R>(statement: BoxStatement, values: readonly unknown[]): Promise<R[]> {
      const result = await client.query({ name: statement.name, text: statement.text, values: values as unknown[] });
      return result.rows as R[];
    },
    upcoming: () => todo.slice(tx.at).map((item) => item.tag),
    local<T>(key: object, make: () => T): T {
      if (!state.has(key)) state.set(key, make());
      return state.get(key) as T;
    },
    peek: <T>(key: object) => state.get(key) as T | undefined,
    beforeCommit(fn: () => Promise<void>): void {
      tx.hooks.push(fn);
    },
  };
  return tx;
}
