import type BetterSqlite3 from 'better-sqlite3';
import { QueueFullError, StoreClosedError } from './errors.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from './limits.js';
import { queueRecord } from './queue-input.js';
import { checkQueueLimits } from './queue-limits.js';
import {
  type AppendOptions,
  type AppendResult,
  DEFAULT_QUEUE_LIMITS,
  type QueuedMessage,
  type QueueLimits,
  type QueueMessageInput,
  type QueuePage,
  type QueueRemoval,
  type QueueStore,
} from './queue-store.js';
import { EMPTY_TOTALS, type Totals } from './totals.js';
import type { WriteQueue } from './write-queue.js';

interface MessageRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  body: string;
  expires_at: number;
  bytes: number;
}

interface RemovedRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  bytes: number;
}

function statements(db: BetterSqlite3.Database) {
  return {
    seqOf: db
      .prepare<[string, string], number>('SELECT seq FROM wmp_messages WHERE recipient = ? AND message_id = ?')
      .pluck(),
    queue: db.prepare<[string], { count: number; bytes: number }>(
      'SELECT count, bytes FROM wmp_queues WHERE recipient = ?',
    ),
    nextSeq: db
      .prepare<[string, number], number>(
        `INSERT INTO wmp_queues (recipient, next_seq, count, bytes) VALUES (?, 2, 1, ?)
       ON CONFLICT (recipient) DO UPDATE SET next_seq = next_seq + 1, count = count + 1, bytes = bytes + excluded.bytes
       RETURNING next_seq - 1`,
      )
      .pluck(),
    insert: db.prepare(
      `INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, body)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    count: db.prepare('UPDATE wmp_queues SET count = count + ?, bytes = bytes + ? WHERE recipient = ?'),
    total: db.prepare("UPDATE totals SET count = count + ?, bytes = bytes + ? WHERE name = 'wmp_queue'"),
    totals: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'wmp_queue'"),
    page: db.prepare<[string, number, number, number], MessageRow>(
      `SELECT recipient, seq, message_id, sender, body, expires_at, bytes FROM wmp_messages
       WHERE recipient = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?`,
    ),
    deleteId: db.prepare<[string, string], RemovedRow>(
      `DELETE FROM wmp_messages WHERE recipient = ? AND message_id = ?
       RETURNING recipient, seq, message_id, sender, bytes`,
    ),
    deleteThrough: db.prepare<[string, number], RemovedRow>(
      `DELETE FROM wmp_messages WHERE recipient = ? AND seq <= ?
       RETURNING recipient, seq, message_id, sender, bytes`,
    ),
    expired: db.prepare<[number, number], RemovedRow & { rowid: number }>(
      `SELECT rowid, recipient, seq, message_id, sender, bytes FROM wmp_messages
       WHERE expires_at <= ? ORDER BY expires_at, rowid LIMIT ?`,
    ),
    deleteRow: db.prepare('DELETE FROM wmp_messages WHERE rowid = ?'),
  };
}

/** Before every message has expired: the `now` of a read that filters nothing. */
const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;

/**
 * The WMP queue on SQLite. Writes go through the shared `WriteQueue` (group commit, settled after
 * COMMIT); reads run directly on the connection, which only ever sees committed state (a batch is
 * written synchronously, so no read can observe half of one).
 */
export class SqliteQueueStore implements QueueStore {
  readonly limits: QueueLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<QueueLimits> = {}) {
    this.limits = checkQueueLimits({ ...DEFAULT_QUEUE_LIMITS, ...limits });
    this.#writer = writer;
    this.#s = statements(db);
  }

  async append(recipient: string, message: QueueMessageInput, options: AppendOptions): Promise<AppendResult> {
    this.#open();
    const record = queueRecord(message, options);
    const s = this.#s;
    return this.#writer.run((): AppendResult => {
      const existing = s.seqOf.get(recipient, record.id);
      if (existing !== undefined) return { status: 'exists', seq: existing };
      const queue = s.queue.get(recipient) ?? EMPTY_TOTALS;
      if (queue.count >= this.limits.maxQueued) throw new QueueFullError('max_queued');
      if (queue.bytes + record.bytes > this.limits.maxBytes) throw new QueueFullError('max_bytes');
      const seq = s.nextSeq.get(recipient, record.bytes)!;
      s.insert.run(recipient, seq, record.id, record.sender, record.expiresAt, record.bytes, record.body);
      s.total.run(1, record.bytes);
      return { status: 'queued', seq };
    });
  }

  async after(recipient: string, cursor: number | string | undefined, limit: number, now?: number): Promise<QueuePage> {
    this.#open();
    const n = clampCount(limit, MAX_PAGE, 'limit');
    let from = 0;
    if (typeof cursor === 'number') {
      checkSeq(cursor, 'cursor');
      from = cursor;
    } else if (typeof cursor === 'string') from = this.#s.seqOf.get(recipient, cursor) ?? 0;
    const rows = this.#s.page.all(recipient, from, now ?? NO_EXPIRY_FILTER, n + 1);
    const more = rows.length > n;
    const messages = rows.slice(0, n).map(message);
    return { messages, next: messages.at(-1)?.seq ?? from, more };
  }

  async ack(recipient: string, ids: readonly string[]): Promise<QueueRemoval[]> {
    this.#open();
    checkIds(ids);
    if (ids.length === 0) return [];
    return this.#writer.run(() => {
      const removed: RemovedRow[] = [];
      for (const id of new Set(ids)) {
        const row = this.#s.deleteId.get(recipient, id);
        if (row !== undefined) removed.push(row);
      }
      return this.#account(removed);
    });
  }

  async ackThrough(recipient: string, id: string): Promise<QueueRemoval[]> {
    this.#open();
    return this.#writer.run(() => {
      const seq = this.#s.seqOf.get(recipient, id);
      return seq === undefined ? [] : this.#account(this.#s.deleteThrough.all(recipient, seq));
    });
  }

  async sweepExpired(now: number, batch: number): Promise<QueueRemoval[]> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(() => {
      const rows = this.#s.expired.all(now, n);
      for (const row of rows) this.#s.deleteRow.run(row.rowid);
      return this.#account(rows, false);
    });
  }

  async stats(recipient: string): Promise<Totals> {
    this.#open();
    return { ...(this.#s.queue.get(recipient) ?? EMPTY_TOTALS) };
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#s.totals.get()! };
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }

  /** Takes removed rows out of their queues' and the store's totals; returns them as removals. */
  #account(rows: readonly RemovedRow[], bySeq = true): QueueRemoval[] {
    const perRecipient = new Map<string, { count: number; bytes: number }>();
    let bytes = 0;
    for (const row of rows) {
      const t = perRecipient.get(row.recipient) ?? { count: 0, bytes: 0 };
      t.count++;
      t.bytes += row.bytes;
      perRecipient.set(row.recipient, t);
      bytes += row.bytes;
    }
    for (const [recipient, t] of perRecipient) this.#s.count.run(-t.count, -t.bytes, recipient);
    if (rows.length > 0) this.#s.total.run(-rows.length, -bytes);
    const removals = rows.map((r) => ({ recipient: r.recipient, seq: r.seq, id: r.message_id, sender: r.sender }));
    // RETURNING gives no order guarantee; a sweep's rows are already in expiry order.
    return bySeq ? removals.sort((a, b) => a.seq - b.seq) : removals;
  }
}

function message(row: MessageRow): QueuedMessage {
  return {
    recipient: row.recipient,
    seq: row.seq,
    id: row.message_id,
    sender: row.sender,
    body: row.body,
    expiresAt: row.expires_at,
    bytes: row.bytes,
  };
}
