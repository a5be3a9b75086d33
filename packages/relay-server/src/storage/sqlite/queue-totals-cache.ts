import type BetterSqlite3 from 'better-sqlite3';

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
    sender: db.prepare<[string, string], Counter>(
      'SELECT count, bytes FROM wmp_queue_senders WHERE recipient = ? AND sender = ?',
    ),
    putSender: db.prepare(
      `INSERT INTO wmp_queue_senders (recipient, sender, count, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (recipient, sender) DO UPDATE SET count = excluded.count, bytes = excluded.bytes`,
    ),
    // A sender with nothing left in a queue has no row: the table stays as small as the queues.
    deleteSender: db.prepare('DELETE FROM wmp_queue_senders WHERE recipient = ? AND sender = ?'),
  };
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
  /** `recipient \n sender` -> that sender's part of the recipient's queue. */
  readonly #senders = new Map<string, Counter & { readonly recipient: string; readonly sender: string }>();
  #total: Counter | undefined;
  readonly #dirty = new Set<string>();
  readonly #dirtySenders = new Set<string>();
  #dirtyTotal = false;

  constructor(db: BetterSqlite3.Database) {
    this.#s = statements(db);
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
    const key = `${recipient}\n${sender}`;
    let c = this.#senders.get(key);
    if (c === undefined) {
      const row = this.#s.sender.get(recipient, sender);
      c = { recipient, sender, count: row?.count ?? 0, bytes: row?.bytes ?? 0 };
      this.#senders.set(key, c);
    }
    return c;
  }

  /** The whole store's totals as of this point of the transaction. */
  total(): Readonly<Counter> {
    this.#total ??= { ...this.#s.total.get()! };
    return this.#total;
  }

  /**
   * Counts a message just stored at the recipient's next seq, and moves the next seq on. Call
   * `queue` and `total` before the insert: this then only changes memory and cannot fail.
   */
  added(recipient: string, sender: string, bytes: number): void {
    const q = this.#queues.get(recipient)!;
    const total = this.#total!;
    const key = `${recipient}\n${sender}`;
    const part = this.#senders.get(key)!;
    part.count++;
    part.bytes += bytes;
    this.#dirtySenders.add(key);
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
  removed(rows: readonly { readonly recipient: string; readonly sender: string; readonly bytes: number }[]): void {
    if (rows.length === 0) return;
    for (const row of rows) this.sender(row.recipient, row.sender);
    const total = this.#total!;
    for (const row of rows) {
      const key = `${row.recipient}\n${row.sender}`;
      const part = this.#senders.get(key)!;
      part.count--;
      part.bytes -= row.bytes;
      this.#dirtySenders.add(key);
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
    for (const key of this.#dirtySenders) {
      const c = this.#senders.get(key)!;
      if (c.count === 0) this.#s.deleteSender.run(c.recipient, c.sender);
      else this.#s.putSender.run(c.recipient, c.sender, c.count, c.bytes);
    }
    if (this.#dirtyTotal) this.#s.putTotal.run(this.#total!.count, this.#total!.bytes);
    this.#dirty.clear();
    this.#dirtySenders.clear();
    this.#dirtyTotal = false;
    trim(this.#queues);
    trim(this.#senders);
  }

  /** Forgets everything, written or not: the transaction rolled back, the file is the truth. */
  clear(): void {
    this.#queues.clear();
    this.#senders.clear();
    this.#total = undefined;
    this.#dirty.clear();
    this.#dirtySenders.clear();
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
