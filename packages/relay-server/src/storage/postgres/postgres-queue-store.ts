import type pg from 'pg';
import {
  checkClaim,
  checkIds,
  checkSeq,
  checkSeqs,
  clampCount,
  MAX_PAGE,
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
import type { PostgresDatabase } from './postgres-database.js';
import { recipientsWithPrefix } from './postgres-queue-prefix.js';
import { type MessageRow, type RemovedRow, QUEUE_SQL as SQL, QUEUE_TOTALS as TOTALS } from './postgres-queue-sql.js';
import { pairKey, QUEUE_TX } from './postgres-queue-tx.js';
import type { Settled, WriteGroup } from './write-ops.js';
import type { WriteTx } from './write-tx.js';

interface AppendItem {
  readonly recipient: string;
  readonly record: QueueRecord;
  /** An append to a part of a partitioned queue: the queue's caps (`appendToPart`). */
  readonly caps?: PartitionedQueueCaps;
}

interface IdsItem {
  readonly recipient: string;
  readonly ids: readonly string[];
}

interface SeqsItem {
  readonly recipient: string;
  readonly seqs: readonly number[];
}

function removal(r: RemovedRow): QueueRemoval {
  return {
    recipient: r.recipient,
    seq: r.seq,
    id: r.message_id,
    sender: r.sender,
    delivered: r.delivered,
    notify: r.notify,
    evidence: r.evidence,
  };
}

const bySeq = (a: QueueRemoval, b: QueueRemoval) => a.seq - b.seq;

/**
 * Hands rows a set-based statement returned to the items that asked for them, in item order: a
 * row asked for twice goes to the first (as if the items had run one after another).
 */
function distribute<I, R>(
  items: readonly I[],
  keysOf: (item: I) => readonly string[],
  rows: readonly R[],
  keyOf: (row: R) => string,
): R[][] {
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return items.map((item) => {
    const mine: R[] = [];
    for (const key of keysOf(item)) {
      const row = byKey.get(key);
      if (row === undefined) continue;
      byKey.delete(key);
      mine.push(row);
    }
    return mine;
  });
}

interface AppendReads {
  readonly existing: Promise<pg.QueryResult<{ recipient: string; message_id: string; seq: number }>>;
  readonly senders: Promise<void>;
  readonly parts: Promise<void>;
}

/** What an append batch reads, sent with the batch's locks: ids already queued, the sender parts, the queue parts. */
function appendReads(tx: WriteTx, items: readonly AppendItem[]): AppendReads {
  const state = tx.state(QUEUE_TX);
  const partPairs = items.flatMap((i) => {
    if (i.record.part === undefined) return [];
    const keys = partKeys(i.record.part, i.record.sender);
    return [[i.recipient, keys.part] as const, [i.recipient, keys.partSender] as const];
  });
  return {
    existing: tx.query(
      SQL.existing,
      [items.map((i) => i.recipient), items.map((i) => i.record.id)],
      'wmp_queue_existing',
    ),
    senders: state.loadSenders(items.map((i) => [i.recipient, i.record.sender] as const)),
    parts: state.loadParts(partPairs),
  };
}

type MarkedRow = Omit<RemovedRow, 'bytes' | 'delivered' | 'part'>;

function markAll(items: readonly SeqsItem[], rows: readonly MarkedRow[]): Settled<QueueRemoval[]>[] {
  const mine = distribute(
    items,
    (item) => item.seqs.map((seq) => `${item.recipient}\n${seq}`),
    rows,
    (row) => `${row.recipient}\n${row.seq}`,
  );
  return mine.map((list) => ({
    ok: true,
    value: list.map((row) => removal({ ...row, bytes: 0, delivered: false, part: null })).sort(bySeq),
  }));
}

/**
 * The WMP queue on PostgreSQL (docs/architecture.md, "Cluster"), for any number of nodes on one
 * database. Writes go through the node's `PostgresWriter`: appends, acknowledgements and delivered
 * marks of one batch are each a few set-based statements (`unnest`), under the lock of every
 * recipient they touch, taken at the start of the transaction in recipient order. A recipient's seq
 * comes from its counter row under that lock, held to COMMIT, so seqs are gap-free and seq order is
 * commit order: a reader never skips a row that commits later with a lower seq. Every cap of
 * `queueCapRefusal` is checked in the same transaction (the store's bytes in `wmp_totals`, see
 * `TxTotals`). Reads run on the pool and see committed state only.
 */
export class PostgresQueueStore implements QueueStore {
  readonly limits: QueueLimits;
  readonly #db: PostgresDatabase;
  readonly #append: WriteGroup<AppendItem, AppendResult, AppendReads>;
  readonly #ack: WriteGroup<IdsItem, QueueRemoval[], Promise<pg.QueryResult<RemovedRow>>>;
  readonly #mark: WriteGroup<SeqsItem, QueueRemoval[], Promise<pg.QueryResult<MarkedRow>>>;

  constructor(db: PostgresDatabase, limits: Partial<QueueLimits> = {}) {
    this.limits = checkQueueLimits(limits);
    this.#db = db;
    this.#append = {
      name: 'queue.append',
      prepare: (tx, items) => appendReads(tx, items),
      run: (tx, items, reads) => this.#appendAll(tx, items, reads!),
    };
    this.#ack = {
      name: 'queue.ack',
      prepare: (tx, items) => {
        const pairs = items.flatMap((item) => item.ids.map((id) => [item.recipient, id] as const));
        return tx.query<RemovedRow>(
          SQL.deleteIds,
          [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
          'wmp_queue_delete_ids',
        );
      },
      run: (tx, items, deleted) => this.#ackAll(tx, items, deleted!),
    };
    this.#mark = {
      name: 'queue.markDelivered',
      prepare: (tx, items) => {
        const pairs = items.flatMap((item) => item.seqs.map((seq) => [item.recipient, seq] as const));
        return tx.query<MarkedRow>(
          SQL.markDelivered,
          [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
          'wmp_queue_mark_delivered',
        );
      },
      run: async (_tx, items, marked) => markAll(items, (await marked!).rows),
    };
  }

  async append(recipient: string, message: QueueMessageInput, options: AppendOptions): Promise<AppendResult> {
    this.#open();
    const record = queueRecord(message, options);
    return this.#db.writer.group(this.#append, { recipient, record }, { queues: [recipient] });
  }

  async appendToPart(queue: string, message: QueueMessageInput, options: PartAppendOptions): Promise<AppendResult> {
    this.#open();
    const record = partRecord(message, options);
    const caps = checkPartitionedCaps(options.caps);
    return this.#db.writer.group(this.#append, { recipient: queue, record, caps }, { queues: [queue] });
  }

  async partStats(queue: string, part: string): Promise<Totals> {
    this.#open();
    const rows = await this.#db.read<Totals>(SQL.partStats, [queue, partKey(part)], 'wmp_queue_part_stats');
    return rows[0] === undefined ? { ...EMPTY_TOTALS } : { count: rows[0].count, bytes: rows[0].bytes };
  }

  async after(recipient: string, cursor: number | string | undefined, limit: number, now?: number): Promise<QueuePage> {
    this.#open();
    const n = clampCount(limit, MAX_PAGE, 'limit');
    let from = 0;
    if (typeof cursor === 'number') {
      checkSeq(cursor, 'cursor');
      from = cursor;
    } else if (typeof cursor === 'string') {
      const rows = await this.#db.read<{ seq: number }>(SQL.seqOf, [recipient, cursor], 'wmp_queue_seq_of');
      from = rows[0]?.seq ?? 0;
    }
    const rows = await this.#db.read<MessageRow>(
      SQL.page,
      [recipient, from, now ?? Number.MIN_SAFE_INTEGER, n + 1],
      'wmp_queue_page',
    );
    const more = rows.length > n;
    const messages = rows.slice(0, n).map(message);
    return { messages, next: messages.at(-1)?.seq ?? from, more };
  }

  async get(recipient: string, id: string): Promise<QueuedMessage | undefined> {
    this.#open();
    const rows = await this.#db.read<MessageRow>(SQL.byId, [recipient, id], 'wmp_queue_by_id');
    return rows[0] === undefined ? undefined : message(rows[0]);
  }

  async claimDue(now: number, limit: number, leaseMs: number): Promise<QueuedMessage[]> {
    this.#open();
    const n = checkClaim(now, limit, leaseMs);
    // A transaction of its own: it changes no count, and the claim holds once it commits.
    return this.#db.writer.run({
      alone: true,
      run: async (tx) => {
        const { rows } = await tx.query<MessageRow>(SQL.claimDue, [now + leaseMs, now, n], 'wmp_queue_claim_due');
        return rows.map(message);
      },
    });
  }

  async ack(recipient: string, ids: readonly string[]): Promise<QueueRemoval[]> {
    this.#open();
    checkIds(ids);
    if (ids.length === 0) return [];
    return this.#db.writer.group(this.#ack, { recipient, ids }, { releases: true });
  }

  async ackThrough(recipient: string, id: string): Promise<QueueRemoval[]> {
    this.#open();
    return this.#db.writer.run({
      locks: { releases: true },
      atomic: true,
      run: async (tx) => {
        const found = await tx.query<{ seq: number }>(SQL.seqOf, [recipient, id], 'wmp_queue_seq_of');
        const seq = found.rows[0]?.seq;
        if (seq === undefined) return [];
        const { rows } = await tx.query<RemovedRow>(SQL.deleteThrough, [recipient, seq], 'wmp_queue_delete_through');
        return this.#removed(tx, rows, await tx.totals()).sort(bySeq);
      },
    });
  }

  async markDelivered(recipient: string, seqs: readonly number[]): Promise<QueueRemoval[]> {
    this.#open();
    checkSeqs(seqs);
    if (seqs.length === 0) return [];
    return this.#db.writer.group(this.#mark, { recipient, seqs }, {});
  }

  async undelivered(recipient: string, now: number, exceptSender?: string): Promise<number> {
    this.#open();
    const rows = await this.#db.read<{ n: number }>(
      SQL.undelivered,
      [recipient, now, exceptSender ?? ''],
      'wmp_queue_undelivered',
    );
    return rows[0]!.n;
  }

  async sweepExpired(now: number, batch: number): Promise<QueueRemoval[]> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    // A transaction of its own: it finds its recipients first, then locks them (in order).
    return this.#db.writer.run({
      alone: true,
      run: async (tx) => {
        const found = await tx.query<{ recipient: string }>(SQL.expiredRecipients, [now, n], 'wmp_queue_expired');
        if (found.rows.length === 0) return [];
        const locked = await tx.lock(
          'queues',
          found.rows.map((r) => r.recipient),
        );
        const { rows } = await tx.query<RemovedRow & { expires_at: number }>(
          SQL.deleteExpired,
          [now, [...locked.keys()], n],
          'wmp_queue_delete_expired',
        );
        rows.sort(
          (a, b) =>
            a.expires_at - b.expires_at ||
            (a.recipient < b.recipient ? -1 : a.recipient > b.recipient ? 1 : a.seq - b.seq),
        );
        return this.#removed(tx, rows, await tx.totals());
      },
    });
  }

  async stats(recipient: string): Promise<Totals> {
    this.#open();
    const rows = await this.#db.read<Totals>(SQL.stats, [recipient], 'wmp_queue_stats');
    return rows[0] === undefined ? { ...EMPTY_TOTALS } : { count: rows[0].count, bytes: rows[0].bytes };
  }

  recipientsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    this.#open();
    return recipientsWithPrefix(this.#db, prefix, limit);
  }

  async totals(): Promise<Totals> {
    this.#open();
    const rows = await this.#db.read<Totals>(SQL.totals, [], 'wmp_queue_totals');
    return { count: rows[0]!.count, bytes: rows[0]!.bytes };
  }

  #open(): void {
    if (this.#db.closed) throw new StoreClosedError();
  }

  /** Every append of a batch: the reads came with the locks; the decisions in memory; one INSERT, not waited for. */
  async #appendAll(tx: WriteTx, items: readonly AppendItem[], reads: AppendReads): Promise<Settled<AppendResult>[]> {
    const state = tx.state(QUEUE_TX);
    const [totals, existing] = await Promise.all([tx.totals(), reads.existing, reads.senders, reads.parts]);
    const seqOf = new Map(existing.rows.map((r) => [pairKey(r.recipient, r.message_id), r.seq]));
    const rows = { r: [] as string[], seq: [] as number[], id: [] as string[], sender: [] as string[] };
    const more = {
      expires: [] as number[],
      bytes: [] as number[],
      notify: [] as boolean[],
      body: [] as string[],
      part: [] as (string | null)[],
      evidence: [] as boolean[],
      due: [] as (number | null)[],
    };
    const outcomes: Settled<AppendResult>[] = [];
    for (const { recipient, record, caps } of items) {
      const key = pairKey(recipient, record.id);
      // A retry of a queued message is answered even when the queue is full.
      const known = seqOf.get(key);
      if (known !== undefined) {
        outcomes.push({ ok: true, value: { status: 'exists', seq: known } });
        continue;
      }
      const queue = state.queue(recipient);
      const total = totals.get(TOTALS);
      const counts = { queue, sender: state.sender(recipient, record.sender), total };
      let full: ReturnType<typeof queueCapRefusal>;
      if (caps === undefined || record.part === undefined) full = queueCapRefusal(this.limits, counts, record.bytes);
      else {
        const keys = partKeys(record.part, record.sender);
        const part = state.part(recipient, keys.part);
        const partSender = state.part(recipient, keys.partSender);
        full = partCapRefusal(this.limits, caps, { ...counts, part, partSender }, record.bytes);
      }
      if (full !== undefined) {
        outcomes.push({ ok: false, error: new RelayQueueFullError(full) });
        continue;
      }
      // The store-wide cap was decided on the totals read at the start: checked again at COMMIT.
      totals.record({
        name: TOTALS,
        field: 'bytes',
        base: total.bytes,
        add: record.bytes,
        limit: this.limits.maxTotalBytes,
        fits: true,
      });
      const seq = queue.nextSeq;
      state.added(recipient, record.sender, record.bytes, record.part);
      totals.add(TOTALS, 1, record.bytes);
      seqOf.set(key, seq);
      rows.r.push(recipient);
      rows.seq.push(seq);
      rows.id.push(record.id);
      rows.sender.push(record.sender);
      more.expires.push(record.expiresAt);
      more.bytes.push(record.bytes);
      more.notify.push(record.notify);
      more.body.push(record.body);
      more.part.push(record.part ?? null);
      more.evidence.push(record.evidence);
      more.due.push(record.dueAt ?? null);
      outcomes.push({ ok: true, value: { status: 'queued', seq } });
    }
    if (rows.r.length > 0) {
      tx.send(
        SQL.insert,
        [
          rows.r,
          rows.seq,
          rows.id,
          rows.sender,
          more.expires,
          more.bytes,
          more.notify,
          more.body,
          more.part,
          more.evidence,
          more.due,
        ],
        'wmp_queue_insert',
      );
    }
    return outcomes;
  }

  async #ackAll(
    tx: WriteTx,
    items: readonly IdsItem[],
    deleted: Promise<pg.QueryResult<RemovedRow>>,
  ): Promise<Settled<QueueRemoval[]>[]> {
    const [totals, { rows }] = await Promise.all([tx.totals(), deleted]);
    const mine = distribute(
      items,
      (item) => item.ids.map((id) => pairKey(item.recipient, id)),
      rows,
      (row) => pairKey(row.recipient, row.message_id),
    );
    return mine.map((list) => ({ ok: true, value: this.#removed(tx, list, totals).sort(bySeq) }));
  }

  /** Takes removed rows out of the counts and the totals; returns them as removals. */
  #removed(tx: WriteTx, rows: readonly RemovedRow[], totals: Awaited<ReturnType<WriteTx['totals']>>): QueueRemoval[] {
    if (rows.length === 0) return [];
    tx.state(QUEUE_TX).removed(rows);
    totals.add(TOTALS, -rows.length, -rows.reduce((sum, row) => sum + row.bytes, 0));
    return rows.map(removal);
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
    delivered: row.delivered,
    notify: row.notify,
    evidence: row.evidence,
  };
}
