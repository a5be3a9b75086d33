import type BetterSqlite3 from 'better-sqlite3';
import { partKeys } from '../contracts/queue-limits.js';

/** A recipient's queue row: next seq, count and bytes queued. */
export interface QueueCounter {
  nextSeq: number;
  count: number;
  bytes: number;
}

interface Counter {
  count: number;
  bytes: number;
}

/** What a removal takes out of the counts: a deleted row's recipient, sender, bytes and part (or null). */
export interface RemovedCounts {
  readonly recipient: string;
  readonly sender: string;
  readonly bytes: number;
  readonly part: string | null;
}

/** Recipient rows kept between transactions; past it the earliest loaded go (dirty rows always stay). */
const MAX_CACHED = 65_536;

function statements(db: BetterSqlite3.Database) {
  return {
    queue: db.prepare<[string], QueueCounter>(
      'SELECT next_seq AS nextSeq, count, bytes FROM wmp_queues WHERE recipient = ?',
    ),
    total: db.prepare<[], Counter>("SELECT count, bytes FROM totals WHERE name = 'wmp_queue'"),
    putQueue: db.prepare(
      `INSERT INTO wmp_queues (recipient, next_seq, count, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (recipient) DO UPDATE SET next_seq = excluded.next_seq, count = excluded.count, bytes = excluded.bytes`,
    ),
    putTotal: db.prepare("UPDATE totals SET count = ?, bytes = ? WHERE name = 'wmp_queue'"),
  };
}

/**
 * Counter rows of one table keyed by (recipient, key): each sender's part of a queue
 * (`wmp_queue_senders`), or a partitioned queue's parts and each sender's share of them
 * (`wmp_queue_parts`). Read on first use, changed here, written once per transaction; a row
 * that reaches zero is deleted (the tables stay as small as the queues).
 */
class KeyedCounters {
  readonly #get: BetterSqlite3.Statement<[string, string], Counter>;
  readonly #put: BetterSqlite3.Statement;
  readonly #delete: BetterSqlite3.Statement;
  readonly #rows = new Map<string, Counter & { readonly recipient: string; readonly key: string }>();
  readonly #dirty = new Set<string>();

  constructor(db: BetterSqlite3.Database, table: 'wmp_queue_senders' | 'wmp_queue_parts', column: 'sender' | 'part') {
    this.#get = db.prepare(`SELECT count, bytes FROM ${table} WHERE recipient = ? AND ${column} = ?`);
    this.#put = db.prepare(
      `INSERT INTO ${table} (recipient, ${column}, count, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (recipient, ${column}) DO UPDATE SET count = excluded.count, bytes = excluded.bytes`,
    );
    this.#delete = db.prepare(`DELETE FROM ${table} WHERE recipient = ? AND ${column} = ?`);
  }

  /** The row as of this point of the transaction (read from the file on first use). */
  get(recipient: string, key: string): Counter {
    const id = `${recipient}\n${key}`;
    let c = this.#rows.get(id);
    if (c === undefined) {
      const row = this.#get.get(recipient, key);
      c = { recipient, key, count: row?.count ?? 0, bytes: row?.bytes ?? 0 };
      this.#rows.set(id, c);
    }
    return c;
  }

  /** Changes a row `get` read before (memory only: cannot fail). */
  add(recipient: string, key: string, count: number, bytes: number): void {
    const id = `${recipient}\n${key}`;
    const c = this.#rows.get(id)!;
    c.count += count;
    c.bytes += bytes;
    this.#dirty.add(id);
  }

  write(): void {
    for (const id of this.#dirty) {
      const c = this.#rows.get(id)!;
      if (c.count === 0) this.#delete.run(c.recipient, c.key);
      else this.#put.run(c.recipient, c.key, c.count, c.bytes);
    }
    this.#dirty.clear();
    trim(this.#rows);
  }

  clear(): void {
    this.#rows.clear();
    this.#dirty.clear();
  }
}

/**
 * A write-back cache of the WMP queue's running-total rows (per recipient with its next seq, whole
 * store), for the single writer of the file. Rows are read the first time they are needed; appends
 * and removals change them here, and `write` (before COMMIT) writes each changed row once as
 * absolute values, so a batch of 100 appends and acks writes one row per touched recipient plus
 * one instead of 200. Exact because only the queue store writes these rows, and because a
 * transaction that rolls back drops everything cached (`clear`): what is left to read is what
 * committed. Recipient rows stay after their queue empties (next seq).
 */
export class QueueTotalsCache {
  readonly #s: ReturnType<typeof statements>;
  readonly #queues = new Map<string, QueueCounter>();
  /** Each sender's part of each recipient's queue. */
  readonly #senders: KeyedCounters;
  /** The parts of partitioned queues, and each sender's share of each (`partKeys`). */
  readonly #parts: KeyedCounters;
  #total: Counter | undefined;
  readonly #dirty = new Set<string>();
  #dirtyTotal = false;

  constructor(db: BetterSqlite3.Database) {
    this.#s = statements(db);
    this.#senders = new KeyedCounters(db, 'wmp_queue_senders', 'sender');
    this.#parts = new KeyedCounters(db, 'wmp_queue_parts', 'part');
  }

  /** The recipient's row as of this point of the transaction (read from the file on first use). */
  queue(recipient: string): Readonly<QueueCounter> {
    let q = this.#queues.get(recipient);
    if (q === undefined) {
      const row = this.#s.queue.get(recipient);
      q = row === undefined ? { nextSeq: 1, count: 0, bytes: 0 } : { ...row };
      this.#queues.set(recipient, q);
    }
    return q;
  }

  /** One sender's part of one recipient's queue as of this point of the transaction. */
  sender(recipient: string, sender: string): Readonly<Counter> {
    return this.#senders.get(recipient, sender);
  }

  /** A part's counter of a partitioned queue (a key of `partKeys`) as of this point of the transaction. */
  part(recipient: string, key: string): Readonly<Counter> {
    return this.#parts.get(recipient, key);
  }

  /** The whole store's totals as of this point of the transaction. */
  total(): Readonly<Counter> {
    this.#total ??= { ...this.#s.total.get()! };
    return this.#total;
  }

  /**
   * Counts a message just stored at the recipient's next seq, and moves the next seq on. Call
   * `queue`, `sender`, `total` (and `part` for both keys of a part) before the insert: this then
   * only changes memory and cannot fail.
   */
  added(recipient: string, sender: string, bytes: number, part?: string): void {
    const q = this.#queues.get(recipient)!;
    const total = this.#total!;
    this.#senders.add(recipient, sender, 1, bytes);
    if (part !== undefined) {
      const keys = partKeys(part, sender);
      this.#parts.add(recipient, keys.part, 1, bytes);
      this.#parts.add(recipient, keys.partSender, 1, bytes);
    }
    q.nextSeq++;
    q.count++;
    q.bytes += bytes;
    total.count++;
    total.bytes += bytes;
    this.#dirty.add(recipient);
    this.#dirtyTotal = true;
  }

  /**
   * Takes deleted messages out of the totals. Call `queue` for each recipient and `total` before
   * the delete. Sender rows it reads itself (which senders a delete hit is known only from its
   * RETURNING; that table is not touched by it), all of them before it changes any count, so a
   * failed read changes nothing here; such a failure is an I/O error, on which SQLite rolls the
   * transaction back and the writer rejects the whole batch.
   */
  removed(rows: readonly RemovedCounts[]): void {
    if (rows.length === 0) return;
    for (const row of rows) {
      this.sender(row.recipient, row.sender);
      if (row.part === null) continue;
      const keys = partKeys(row.part, row.sender);
      this.part(row.recipient, keys.part);
      this.part(row.recipient, keys.partSender);
    }
    const total = this.#total!;
    for (const row of rows) {
      this.#senders.add(row.recipient, row.sender, -1, -row.bytes);
      if (row.part !== null) {
        const keys = partKeys(row.part, row.sender);
        this.#parts.add(row.recipient, keys.part, -1, -row.bytes);
        this.#parts.add(row.recipient, keys.partSender, -1, -row.bytes);
      }
      const q = this.#queues.get(row.recipient)!;
      q.count--;
      q.bytes -= row.bytes;
      total.count--;
      total.bytes -= row.bytes;
      this.#dirty.add(row.recipient);
    }
    this.#dirtyTotal = true;
  }

  /** Writes every changed row (absolute values, so writing twice is harmless). */
  write(): void {
    for (const recipient of this.#dirty) {
      const q = this.#queues.get(recipient)!;
      this.#s.putQueue.run(recipient, q.nextSeq, q.count, q.bytes);
    }
    this.#senders.write();
    this.#parts.write();
    if (this.#dirtyTotal) this.#s.putTotal.run(this.#total!.count, this.#total!.bytes);
    this.#dirty.clear();
    this.#dirtyTotal = false;
    trim(this.#queues);
  }

  /** Forgets everything, written or not: the transaction rolled back, the file is the truth. */
  clear(): void {
    this.#queues.clear();
    this.#senders.clear();
    this.#parts.clear();
    this.#total = undefined;
    this.#dirty.clear();
    this.#dirtyTotal = false;
  }
}

/** Keeps the map of clean rows bounded: over the cap, the earliest loaded half goes. */
function trim(map: Map<string, unknown>): void {
  if (map.size <= MAX_CACHED) return;
  let excess = map.size - MAX_CACHED / 2;
  for (const key of map.keys()) {
    if (excess-- <= 0) break;
    map.delete(key);
  }
}
