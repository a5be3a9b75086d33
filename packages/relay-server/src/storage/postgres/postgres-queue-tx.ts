import { partKeys } from '../contracts/queue-limits.js';
import type { Totals } from '../contracts/totals.js';
import { EMPTY_TOTALS } from '../contracts/totals.js';
import { QUEUE_SQL as SQL } from './postgres-queue-sql.js';
import type { TxState, TxStateKey, WriteTx } from './write-tx.js';

interface Counter {
  nextSeq: number;
  count: number;
  bytes: number;
}

interface KeyedPart {
  readonly recipient: string;
  readonly key: string;
  /** The row as read (under the recipient's lock); undefined until read. */
  base: Totals | undefined;
  count: number;
  bytes: number;
}

export const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/** A removed row as the counts see it. */
export interface RemovedCounts {
  readonly recipient: string;
  readonly sender: string;
  readonly bytes: number;
  readonly part: string | null;
}

/** The statements of one table of counter rows keyed by (recipient, key). */
interface KeyedSql {
  readonly read: string;
  readonly add: string;
  readonly drop: string;
  readonly name: string;
}

/**
 * Counter rows keyed by (recipient, key) that one transaction changes: each sender's part of a
 * queue (`wmp_queue_senders`), or the parts of a partitioned queue and each sender's share of them
 * (`wmp_queue_parts`). A row is read for a cap check (its recipient is locked, so it holds
 * still), else changed blind; the changes are sent as increments before COMMIT, and rows left at
 * zero are dropped. Every change is journaled.
 */
class KeyedCounters {
  readonly #tx: WriteTx;
  readonly #sql: KeyedSql;
  readonly #parts = new Map<string, KeyedPart>();

  constructor(tx: WriteTx, sql: KeyedSql) {
    this.#tx = tx;
    this.#sql = sql;
  }

  #part(recipient: string, key: string): KeyedPart {
    const id = pairKey(recipient, key);
    let part = this.#parts.get(id);
    if (part === undefined) {
      part = { recipient, key, base: undefined, count: 0, bytes: 0 };
      this.#parts.set(id, part);
    }
    return part;
  }

  /** Sends the read of the rows not read yet; `get` may be called once it resolved. */
  load(pairs: Iterable<readonly [string, string]>): Promise<void> {
    const wanted = new Map<string, KeyedPart>();
    for (const [r, k] of pairs) {
      const part = this.#part(r, k);
      if (part.base === undefined) wanted.set(pairKey(r, k), part);
    }
    if (wanted.size === 0) return Promise.resolve();
    const parts = [...wanted.values()];
    const read = this.#tx
      .query<Totals & { recipient: string; key: string }>(
        this.#sql.read,
        [parts.map((p) => p.recipient), parts.map((p) => p.key)],
        `${this.#sql.name}_read`,
      )
      .then(({ rows }) => {
        for (const part of parts) part.base ??= EMPTY_TOTALS;
        for (const row of rows)
          wanted.get(pairKey(row.recipient, row.key))!.base = { count: row.count, bytes: row.bytes };
      });
    // Sent with the locks, it may never be awaited (the batch failed before): never an unhandled rejection.
    read.catch(() => undefined);
    return read;
  }

  /** One row as of this point (read with `load` first). */
  get(recipient: string, key: string): Totals {
    const part = this.#parts.get(pairKey(recipient, key))!;
    return { count: part.base!.count + part.count, bytes: part.base!.bytes + part.bytes };
  }

  add(recipient: string, key: string, count: number, bytes: number): void {
    const part = this.#part(recipient, key);
    part.count += count;
    part.bytes += bytes;
    this.#tx.undo(() => {
      part.count -= count;
      part.bytes -= bytes;
    });
  }

  beforeCommit(tx: WriteTx): void {
    const changed = [...this.#parts.values()].filter((p) => p.count !== 0 || p.bytes !== 0);
    if (changed.length === 0) return;
    tx.send(
      this.#sql.add,
      [
        changed.map((p) => p.recipient),
        changed.map((p) => p.key),
        changed.map((p) => p.count),
        changed.map((p) => p.bytes),
      ],
      `${this.#sql.name}_add`,
    );
    const shrunk = changed.filter((p) => p.count < 0);
    if (shrunk.length > 0) {
      tx.send(this.#sql.drop, [shrunk.map((p) => p.recipient), shrunk.map((p) => p.key)], `${this.#sql.name}_drop`);
    }
  }
}

/**
 * What one transaction changed in the queue's counter rows: the recipient rows (locked for the
 * batch, read with the lock), each sender's part of a queue, and the parts of partitioned queues
 * (`KeyedCounters`), written once before COMMIT. Every change is journaled, so an operation rolled
 * back to its savepoint leaves no trace here either.
 */
export class QueueTx implements TxState {
  readonly #tx: WriteTx;
  readonly #queues = new Map<string, Counter>();
  readonly #dirty = new Set<string>();
  readonly #senders: KeyedCounters;
  readonly #parts: KeyedCounters;
  /** What removals lowered in queues this transaction did not lock at BEGIN (see `released`). */
  readonly #released = new Map<string, { count: number; bytes: number }>();

  constructor(tx: WriteTx) {
    this.#tx = tx;
    this.#senders = new KeyedCounters(tx, {
      read: SQL.senders,
      add: SQL.addSenders,
      drop: SQL.dropSenders,
      name: 'wmp_queue_senders',
    });
    this.#parts = new KeyedCounters(tx, {
      read: SQL.parts,
      add: SQL.addParts,
      drop: SQL.dropParts,
      name: 'wmp_queue_parts',
    });
  }

  /** The recipient's counter row, which this transaction holds locked. */
  queue(recipient: string): Readonly<Counter> {
    let q = this.#queues.get(recipient);
    if (q === undefined) {
      const row = this.#tx.locked('queues').get(recipient);
      if (row === undefined) throw new Error('queue row not locked');
      q = { nextSeq: row['next_seq'] as number, count: row['count'] as number, bytes: row['bytes'] as number };
      this.#queues.set(recipient, q);
    }
    return q;
  }

  /**
   * Sends the read of the sender parts not read yet (their recipients are locked, so they hold
   * still); `sender` may be called once it resolved.
   */
  loadSenders(pairs: Iterable<readonly [string, string]>): Promise<void> {
    return this.#senders.load(pairs);
  }

  /** Sends the read of the part counters (keys of `partKeys`) not read yet; `part` may be called once it resolved. */
  loadParts(pairs: Iterable<readonly [string, string]>): Promise<void> {
    return this.#parts.load(pairs);
  }

  /** One sender's part of one recipient's queue as of this point (read with `loadSenders` first). */
  sender(recipient: string, sender: string): Totals {
    return this.#senders.get(recipient, sender);
  }

  /** A part counter of a partitioned queue as of this point (read with `loadParts` first). */
  part(recipient: string, key: string): Totals {
    return this.#parts.get(recipient, key);
  }

  /** Counts a message just stored at the recipient's next seq, and moves the next seq on. */
  added(recipient: string, sender: string, bytes: number, part?: string): void {
    const q = this.queue(recipient) as Counter;
    q.nextSeq++;
    q.count++;
    q.bytes += bytes;
    this.#dirty.add(recipient);
    this.#tx.undo(() => {
      q.nextSeq--;
      q.count--;
      q.bytes -= bytes;
    });
    this.#countParts(recipient, sender, part, 1, bytes);
  }

  #countParts(recipient: string, sender: string, part: string | null | undefined, count: number, bytes: number): void {
    this.#senders.add(recipient, sender, count, bytes);
    if (part === null || part === undefined) return;
    const keys = partKeys(part, sender);
    this.#parts.add(recipient, keys.part, count, bytes);
    this.#parts.add(recipient, keys.partSender, count, bytes);
  }

  /**
   * Takes deleted messages out of the counts: of a recipient locked at BEGIN in its counter row;
   * of any other as a decrement sent before COMMIT (`release`), which locks the row only then.
   */
  removed(rows: readonly RemovedCounts[]): void {
    const locked = this.#tx.locked('queues');
    for (const row of rows) {
      this.#countParts(row.recipient, row.sender, row.part, -1, -row.bytes);
      if (!locked.has(row.recipient)) {
        this.#release(row.recipient, row.bytes);
        continue;
      }
      const q = this.queue(row.recipient) as Counter;
      q.count--;
      q.bytes -= row.bytes;
      this.#dirty.add(row.recipient);
      this.#tx.undo(() => {
        q.count++;
        q.bytes += row.bytes;
      });
    }
  }

  #release(recipient: string, bytes: number): void {
    let r = this.#released.get(recipient);
    if (r === undefined) {
      r = { count: 0, bytes: 0 };
      this.#released.set(recipient, r);
    }
    r.count++;
    r.bytes += bytes;
    const undo = r;
    this.#tx.undo(() => {
      undo.count--;
      undo.bytes -= bytes;
    });
  }

  /**
   * Sends every changed counter: recipient rows locked at BEGIN as values; the others' decrements,
   * their rows locked in recipient order; sender parts and queue parts as increments.
   */
  beforeCommit(tx: WriteTx): void {
    const released = [...this.#released]
      .filter(([, r]) => r.count !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (released.length > 0) {
      const r = released.map(([k]) => k);
      tx.send(SQL.lockReleased, [r], 'wmp_queue_lock_released');
      tx.send(
        SQL.release,
        [r, released.map(([, x]) => x.count), released.map(([, x]) => x.bytes)],
        'wmp_queue_release',
      );
    }
    if (this.#dirty.size > 0) {
      const r = [...this.#dirty];
      const q = r.map((k) => this.#queues.get(k)!);
      tx.send(
        SQL.putQueues,
        [r, q.map((x) => x.nextSeq), q.map((x) => x.count), q.map((x) => x.bytes)],
        'wmp_queue_put',
      );
    }
    this.#senders.beforeCommit(tx);
    this.#parts.beforeCommit(tx);
  }
}

export const QUEUE_TX: TxStateKey<QueueTx> = { name: 'queue', create: (tx) => new QueueTx(tx) };
