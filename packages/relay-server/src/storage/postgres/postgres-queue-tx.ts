import type { Totals } from '../contracts/totals.js';
import { EMPTY_TOTALS } from '../contracts/totals.js';
import { QUEUE_SQL as SQL } from './postgres-queue-sql.js';
import type { TxState, TxStateKey, WriteTx } from './write-tx.js';

interface Counter {
  nextSeq: number;
  count: number;
  bytes: number;
}

interface SenderPart {
  readonly recipient: string;
  readonly sender: string;
  /** The row as read (under the recipient's lock); undefined until read. */
  base: Totals | undefined;
  count: number;
  bytes: number;
}

export const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/**
 * What one transaction changed in the queue's counter rows: the recipient rows (locked for the
 * batch, read with the lock), each sender's part of a queue (read for a cap check, else changed
 * blind), written once before COMMIT. Every change is journaled, so an operation rolled back to
 * its savepoint leaves no trace here either.
 */
export class QueueTx implements TxState {
  readonly #tx: WriteTx;
  readonly #queues = new Map<string, Counter>();
  readonly #dirty = new Set<string>();
  readonly #senders = new Map<string, SenderPart>();
  /** What removals lowered in queues this transaction did not lock at BEGIN (see `released`). */
  readonly #released = new Map<string, { count: number; bytes: number }>();

  constructor(tx: WriteTx) {
    this.#tx = tx;
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

  #part(recipient: string, sender: string): SenderPart {
    const key = pairKey(recipient, sender);
    let part = this.#senders.get(key);
    if (part === undefined) {
      part = { recipient, sender, base: undefined, count: 0, bytes: 0 };
      this.#senders.set(key, part);
    }
    return part;
  }

  /**
   * Sends the read of the sender parts not read yet (their recipients are locked, so they hold
   * still); `sender` may be called once it resolved.
   */
  loadSenders(pairs: Iterable<readonly [string, string]>): Promise<void> {
    const wanted = new Map<string, SenderPart>();
    for (const [r, s] of pairs) {
      const part = this.#part(r, s);
      if (part.base === undefined) wanted.set(pairKey(r, s), part);
    }
    if (wanted.size === 0) return Promise.resolve();
    const parts = [...wanted.values()];
    const read = this.#tx
      .query<Totals & { recipient: string; sender: string }>(
        SQL.senders,
        [parts.map((p) => p.recipient), parts.map((p) => p.sender)],
        'wmp_queue_senders',
      )
      .then(({ rows }) => {
        for (const part of parts) part.base ??= EMPTY_TOTALS;
        for (const row of rows)
          wanted.get(pairKey(row.recipient, row.sender))!.base = { count: row.count, bytes: row.bytes };
      });
    // Sent with the locks, it may never be awaited (the batch failed before): never an unhandled rejection.
    read.catch(() => undefined);
    return read;
  }

  /** One sender's part of one recipient's queue as of this point (read with `loadSenders` first). */
  sender(recipient: string, sender: string): Totals {
    const part = this.#senders.get(pairKey(recipient, sender))!;
    return { count: part.base!.count + part.count, bytes: part.base!.bytes + part.bytes };
  }

  /** Counts a message just stored at the recipient's next seq, and moves the next seq on. */
  added(recipient: string, sender: string, bytes: number): void {
    const q = this.queue(recipient) as Counter;
    const part = this.#part(recipient, sender);
    q.nextSeq++;
    q.count++;
    q.bytes += bytes;
    part.count++;
    part.bytes += bytes;
    this.#dirty.add(recipient);
    this.#tx.undo(() => {
      q.nextSeq--;
      q.count--;
      q.bytes -= bytes;
      part.count--;
      part.bytes -= bytes;
    });
  }

  /**
   * Takes deleted messages out of the counts: of a recipient locked at BEGIN in its counter row;
   * of any other as a decrement sent before COMMIT (`release`), which locks the row only then.
   */
  removed(rows: readonly { readonly recipient: string; readonly sender: string; readonly bytes: number }[]): void {
    const locked = this.#tx.locked('queues');
    for (const row of rows) {
      if (!locked.has(row.recipient)) {
        this.#release(row.recipient, row.sender, row.bytes);
        continue;
      }
      const q = this.queue(row.recipient) as Counter;
      const part = this.#part(row.recipient, row.sender);
      q.count--;
      q.bytes -= row.bytes;
      part.count--;
      part.bytes -= row.bytes;
      this.#dirty.add(row.recipient);
      this.#tx.undo(() => {
        q.count++;
        q.bytes += row.bytes;
        part.count++;
        part.bytes += row.bytes;
      });
    }
  }

  #release(recipient: string, sender: string, bytes: number): void {
    let r = this.#released.get(recipient);
    if (r === undefined) {
      r = { count: 0, bytes: 0 };
      this.#released.set(recipient, r);
    }
    const part = this.#part(recipient, sender);
    r.count++;
    r.bytes += bytes;
    part.count--;
    part.bytes -= bytes;
    const undo = r;
    this.#tx.undo(() => {
      undo.count--;
      undo.bytes -= bytes;
      part.count++;
      part.bytes += bytes;
    });
  }

  /**
   * Sends every changed counter: recipient rows locked at BEGIN as values; the others' decrements,
   * their rows locked in recipient order; sender parts as increments.
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
    const changed = [...this.#senders.values()].filter((p) => p.count !== 0 || p.bytes !== 0);
    if (changed.length === 0) return;
    tx.send(
      SQL.addSenders,
      [
        changed.map((p) => p.recipient),
        changed.map((p) => p.sender),
        changed.map((p) => p.count),
        changed.map((p) => p.bytes),
      ],
      'wmp_queue_senders_add',
    );
    const shrunk = changed.filter((p) => p.count < 0);
    if (shrunk.length > 0) {
      tx.send(SQL.dropSenders, [shrunk.map((p) => p.recipient), shrunk.map((p) => p.sender)], 'wmp_queue_senders_drop');
    }
  }
}

export const QUEUE_TX: TxStateKey<QueueTx> = { name: 'queue', create: (tx) => new QueueTx(tx) };
