import type BetterSqlite3 from 'better-sqlite3';
import {
  checkClaim,
  checkIds,
  checkPrefix,
  checkSeq,
  checkSeqs,
  clampCount,
  MAX_PAGE,
  MAX_RECIPIENTS_PER_CALL,
  MAX_SWEEP_BATCH,
} from '../contracts/limits.js';
import { partRecord, type QueueRecord, queueRecord } from '../contracts/queue-input.js';
import {
  checkPartitionedCaps,
  checkQueueLimits,
  partCapRefusal,
  partKey,
  partKeys,
  queueCapRefusal,
} from '../contracts/queue-limits.js';
import type {
  AppendOptions,
  AppendResult,
  PartAppendOptions,
  PartitionedQueueCaps,
  QueuedMessage,
  QueueLimits,
  QueueMessageInput,
  QueuePage,
  QueueRemoval,
  QueueStore,
} from '../contracts/queue-store.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { RelayQueueFullError, StoreClosedError } from '../errors.js';
import { type QueueCounter, QueueTotalsCache } from './queue-totals-cache.js';
import type { WriteQueue } from './write-queue.js';

interface MessageRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  body: string;
  expires_at: number;
  bytes: number;
  delivered: number;
  notify: number;
  evidence: number;
}

interface RemovedRow {
  recipient: string;
  seq: number;
  message_id: string;
  sender: string;
  bytes: number;
  delivered: number;
  notify: number;
  evidence: number;
  part: string | null;
}

/** What a read returns of a message. */
const MESSAGE = 'recipient, seq, message_id, sender, body, expires_at, bytes, delivered, notify, evidence';

/** What a removal returns: enough for its status, and for the counts it takes out. */
const REMOVED = 'recipient, seq, message_id, sender, bytes, delivered, notify, evidence, part';

function statements(db: BetterSqlite3.Database) {
  return {
    seqOf: db
      .prepare<[string, string], number>('SELECT seq FROM wmp_messages WHERE recipient = ? AND message_id = ?')
      .pluck(),
    queue: db.prepare<[string], { count: number; bytes: number }>(
      'SELECT count, bytes FROM wmp_queues WHERE recipient = ?',
    ),
    withPrefix: db
      .prepare<[string, number], string>(
        'SELECT recipient FROM wmp_queues WHERE count > 0 AND instr(recipient, ?) = 1 LIMIT ?',
      )
      .pluck(),
    // A retry (same id) is a no-op found by the UNIQUE constraint, not by a SELECT first; a clash
    // on (recipient, seq) is not covered and throws, so a wrong seq can never pass silently.
    insert: db.prepare(
      `INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, body, notify, evidence, part,
         queued_at, due_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (recipient, message_id) DO NOTHING`,
    ),
    byId: db.prepare<[string, string], MessageRow>(
      `SELECT ${MESSAGE} FROM wmp_messages WHERE recipient = ? AND message_id = ?`,
    ),
    // One UPDATE: atomic by itself, and the claimed rows come back (the lease is the claim).
    claimDue: db.prepare<[number, number, number, number], MessageRow>(
      `UPDATE wmp_messages SET due_at = ? WHERE rowid IN
         (SELECT rowid FROM wmp_messages WHERE due_at IS NOT NULL AND due_at <= ? AND expires_at > ?
          ORDER BY due_at, rowid LIMIT ?)
       RETURNING ${MESSAGE}`,
    ),
    totals: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'wmp_queue'"),
    part: db.prepare<[string, string], Totals>(
      'SELECT count, bytes FROM wmp_queue_parts WHERE recipient = ? AND part = ?',
    ),
    page: db.prepare<[string, number, number, number], MessageRow>(
      `SELECT ${MESSAGE} FROM wmp_messages
       WHERE recipient = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?`,
    ),
    deleteId: db.prepare<[string, string], RemovedRow>(
      `DELETE FROM wmp_messages WHERE recipient = ? AND message_id = ?
       RETURNING ${REMOVED}`,
    ),
    // Several ids in one statement (a JSON array), so that an ack writes once and is atomic alone.
    deleteIds: db.prepare<[string, string], RemovedRow>(
      `DELETE FROM wmp_messages WHERE recipient = ? AND message_id IN (SELECT value FROM json_each(?))
       RETURNING ${REMOVED}`,
    ),
    deleteThrough: db.prepare<[string, number], RemovedRow>(
      `DELETE FROM wmp_messages WHERE recipient = ? AND seq <= ?
       RETURNING ${REMOVED}`,
    ),
    expired: db.prepare<[number, number], RemovedRow & { rowid: number }>(
      `SELECT rowid, ${REMOVED} FROM wmp_messages WHERE expires_at <= ? ORDER BY expires_at, rowid LIMIT ?`,
    ),
    deleteRow: db.prepare('DELETE FROM wmp_messages WHERE rowid = ?'),
    // Only rows not marked yet come back: each sender hears `delivered` once.
    markDelivered: db.prepare<[string, string], RemovedRow>(
      `UPDATE wmp_messages SET delivered = 1
       WHERE recipient = ? AND seq IN (SELECT value FROM json_each(?)) AND delivered = 0
       RETURNING ${REMOVED}`,
    ),
    undelivered: db
      .prepare<[string, number, string], number>(
        'SELECT count(*) FROM wmp_messages WHERE recipient = ? AND delivered = 0 AND expires_at > ? AND sender != ?',
      )
      .pluck(),
  };
}

/** Before every message has expired: the `now` of a read that filters nothing. */
const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;

/**
 * The WMP queue on SQLite. Writes go through the shared `WriteQueue` (group commit, settled after
 * COMMIT); reads run directly on the connection, which only ever sees committed state (a batch is
 * written synchronously, so no read can observe half of one).
 *
 * The running totals (per recipient with its next seq, whole store) live in a write-back cache
 * (`QueueTotalsCache`, exact, written once per transaction, dropped when one rolls back). So an
 * append is one INSERT and an ack one DELETE, each atomic by itself (`runAtomic`, no savepoint):
 * it reads what it needs and checks the caps first, then writes one statement, then counts in
 * memory, which cannot fail. A statement that throws leaves nothing behind (SQLite undoes the
 * statement), and an error that rolls the transaction back rejects the whole batch.
 */
export class SqliteQueueStore implements QueueStore {
  readonly limits: QueueLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;
  readonly #totals: QueueTotalsCache;

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<QueueLimits> = {}) {
    this.limits = checkQueueLimits(limits);
    this.#writer = writer;
    this.#s = statements(db);
    const totals = new QueueTotalsCache(db);
    this.#totals = totals;
    writer.onBeforeCommit(() => totals.write());
    writer.onRollback(() => totals.clear());
  }

  async append(recipient: string, message: QueueMessageInput, options: AppendOptions): Promise<AppendResult> {
    this.#open();
    const record = queueRecord(message, options);
    return this.#writer.runAtomic(() => this.#append(recipient, record));
  }

  async appendToPart(queue: string, message: QueueMessageInput, options: PartAppendOptions): Promise<AppendResult> {
    this.#open();
    const record = partRecord(message, options);
    const caps = checkPartitionedCaps(options.caps);
    return this.#writer.runAtomic(() => this.#append(queue, record, caps));
  }

  async partStats(queue: string, part: string): Promise<Totals> {
    this.#open();
    return { ...(this.#s.part.get(queue, partKey(part)) ?? EMPTY_TOTALS) };
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

  async get(recipient: string, id: string): Promise<QueuedMessage | undefined> {
    this.#open();
    const row = this.#s.byId.get(recipient, id);
    return row === undefined ? undefined : message(row);
  }

  async claimDue(now: number, limit: number, leaseMs: number): Promise<QueuedMessage[]> {
    this.#open();
    const n = checkClaim(now, limit, leaseMs);
    return this.#writer.runAtomic(() => this.#s.claimDue.all(now + leaseMs, now, now, n).map(message));
  }

  async ack(recipient: string, ids: readonly string[]): Promise<QueueRemoval[]> {
    this.#open();
    checkIds(ids);
    if (ids.length === 0) return [];
    return this.#writer.runAtomic(() => {
      this.#load(recipient);
      const rows =
        ids.length === 1
          ? this.#s.deleteId.all(recipient, ids[0]!)
          : this.#s.deleteIds.all(recipient, JSON.stringify(ids));
      return this.#account(rows);
    });
  }

  async ackThrough(recipient: string, id: string): Promise<QueueRemoval[]> {
    this.#open();
    return this.#writer.runAtomic(() => {
      const seq = this.#s.seqOf.get(recipient, id);
      if (seq === undefined) return [];
      this.#load(recipient);
      return this.#account(this.#s.deleteThrough.all(recipient, seq));
    });
  }

  async markDelivered(recipient: string, seqs: readonly number[]): Promise<QueueRemoval[]> {
    this.#open();
    checkSeqs(seqs);
    if (seqs.length === 0) return [];
    // One UPDATE, atomic by itself; it changes no count.
    return this.#writer.runAtomic(() =>
      this.#s.markDelivered
        .all(recipient, JSON.stringify(seqs))
        .map((r) => ({
          recipient: r.recipient,
          seq: r.seq,
          id: r.message_id,
          sender: r.sender,
          delivered: false,
          notify: r.notify === 1,
          evidence: r.evidence === 1,
        }))
        .sort((a, b) => a.seq - b.seq),
    );
  }

  async undelivered(recipient: string, now: number, exceptSender?: string): Promise<number> {
    this.#open();
    return this.#s.undelivered.get(recipient, now, exceptSender ?? '')!;
  }

  async sweepExpired(now: number, batch: number): Promise<QueueRemoval[]> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    // Several DELETEs: in a savepoint, rolled back together if one throws (the cache is counted last).
    return this.#writer.run(() => {
      const rows = this.#s.expired.all(now, n);
      for (const row of rows) this.#load(row.recipient);
      for (const row of rows) this.#s.deleteRow.run(row.rowid);
      return this.#account(rows, false);
    });
  }

  async stats(recipient: string): Promise<Totals> {
    this.#open();
    return { ...(this.#s.queue.get(recipient) ?? EMPTY_TOTALS) };
  }

  async recipientsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    this.#open();
    checkPrefix(prefix);
    const n = clampCount(limit, MAX_RECIPIENTS_PER_CALL, 'limit');
    // instr, not LIKE: a prefix may hold % or _.
    return this.#s.withPrefix.all(prefix, n);
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#s.totals.get()! };
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }

  /**
   * One append inside the writer's transaction; atomic by itself (see `WriteQueue.runAtomic`).
   * With `caps`, the record's part is held to the per-recipient limits and the queue to `caps`.
   */
  #append(recipient: string, record: QueueRecord, caps?: PartitionedQueueCaps): AppendResult {
    const queue = this.#load(recipient);
    const sender = this.#totals.sender(recipient, record.sender);
    const total = this.#totals.total();
    let full: ReturnType<typeof queueCapRefusal>;
    if (caps === undefined || record.part === undefined) {
      full = queueCapRefusal(this.limits, { queue, sender, total }, record.bytes);
    } else {
      const keys = partKeys(record.part, record.sender);
      const part = this.#totals.part(recipient, keys.part);
      const partSender = this.#totals.part(recipient, keys.partSender);
      full = partCapRefusal(this.limits, caps, { queue, sender, part, partSender, total }, record.bytes);
    }
    if (full !== undefined) {
      // A retry of a queued message is answered even when the queue is full.
      const existing = this.#s.seqOf.get(recipient, record.id);
      if (existing !== undefined) return { status: 'exists', seq: existing };
      throw new RelayQueueFullError(full);
    }
    const seq = queue.nextSeq;
    const { changes } = this.#s.insert.run(
      recipient,
      seq,
      record.id,
      record.sender,
      record.expiresAt,
      record.bytes,
      record.body,
      Number(record.notify),
      Number(record.evidence),
      record.part ?? null,
      Date.now(),
      record.dueAt ?? null,
    );
    if (changes === 0) return { status: 'exists', seq: this.#s.seqOf.get(recipient, record.id)! };
    this.#totals.added(recipient, record.sender, record.bytes, record.part);
    return { status: 'queued', seq };
  }

  /** Reads the rows a write will count into the cache, before the write (a failed read writes nothing). */
  #load(recipient: string): Readonly<QueueCounter> {
    this.#totals.total();
    return this.#totals.queue(recipient);
  }

  /** Takes removed rows out of the running totals; returns them as removals. */
  #account(rows: readonly RemovedRow[], bySeq = true): QueueRemoval[] {
    this.#totals.removed(rows);
    const removals = rows.map((r) => ({
      recipient: r.recipient,
      seq: r.seq,
      id: r.message_id,
      sender: r.sender,
      delivered: r.delivered === 1,
      notify: r.notify === 1,
      evidence: r.evidence === 1,
    }));
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
    delivered: row.delivered === 1,
    notify: row.notify === 1,
    evidence: row.evidence === 1,
  };
}
