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
  QueuedMessage,
  QueueLimits,
  QueueMessageInput,
  QueuePage,
  QueueRemoval,
  QueueStore,
} from '../contracts/queue-store.js';
import {
  compareKeys,
  type InventoryPage,
  inventoryArgs,
  inventoryPage,
  type QueueOverview,
} from '../contracts/store-inventory.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { RelayQueueFullError, StoreClosedError } from '../errors.js';

interface Row extends Omit<QueueRecord, 'dueAt'> {
  readonly recipient: string;
  readonly seq: number;
  delivered: boolean;
  /** When it falls due (moved on by each claim); undefined: never claimed. */
  dueAt: number | undefined;
  /** Arrival order across the store: breaks ties between equal expiries, as SQLite's rowid does. */
  readonly order: number;
  /** When it was appended (ms since the epoch). */
  readonly queuedAt: number;
}

interface Counter {
  count: number;
  bytes: number;
}

interface Queue {
  nextSeq: number;
  bytes: number;
  /** Each sender's part of this queue (a sender holds at most its share). */
  readonly senders: Map<string, Counter>;
  /** A partitioned queue's parts and each sender's share of each (`partKeys`). */
  readonly parts: Map<string, Counter>;
  /** By seq; Map order is seq order because seqs only grow. */
  readonly bySeq: Map<number, Row>;
  readonly byId: Map<string, Row>;
}

/**
 * The WMP queue in memory, for tests and `--ephemeral` relays: same behaviour as the SQLite
 * queue (one shared adapter suite), nothing survives the process.
 */
export class MemoryQueueStore implements QueueStore {
  readonly limits: QueueLimits;
  readonly #queues = new Map<string, Queue>();
  readonly #totals = { count: 0, bytes: 0 };
  /** The rows with a due time (few: messages held for later). */
  readonly #due = new Set<Row>();
  #order = 0;
  #closed = false;

  constructor(limits: Partial<QueueLimits> = {}) {
    this.limits = checkQueueLimits(limits);
  }

  async append(recipient: string, message: QueueMessageInput, options: AppendOptions): Promise<AppendResult> {
    this.#open();
    const record = queueRecord(message, options);
    const queue = this.#queues.get(recipient);
    const existing = queue?.byId.get(record.id);
    if (existing !== undefined) return { status: 'exists', seq: existing.seq };
    const counts = {
      queue: { count: queue?.bySeq.size ?? 0, bytes: queue?.bytes ?? 0 },
      sender: queue?.senders.get(record.sender) ?? EMPTY_TOTALS,
      total: this.#totals,
    };
    const full = queueCapRefusal(this.limits, counts, record.bytes);
    if (full !== undefined) throw new RelayQueueFullError(full);
    return this.#insert(recipient, queue, record);
  }

  async appendToPart(queue: string, message: QueueMessageInput, options: PartAppendOptions): Promise<AppendResult> {
    this.#open();
    const record = partRecord(message, options);
    const caps = checkPartitionedCaps(options.caps);
    const q = this.#queues.get(queue);
    const existing = q?.byId.get(record.id);
    if (existing !== undefined) return { status: 'exists', seq: existing.seq };
    const keys = partKeys(options.part, record.sender);
    const counts = {
      queue: { count: q?.bySeq.size ?? 0, bytes: q?.bytes ?? 0 },
      sender: q?.senders.get(record.sender) ?? EMPTY_TOTALS,
      part: q?.parts.get(keys.part) ?? EMPTY_TOTALS,
      partSender: q?.parts.get(keys.partSender) ?? EMPTY_TOTALS,
      total: this.#totals,
    };
    const full = partCapRefusal(this.limits, caps, counts, record.bytes);
    if (full !== undefined) throw new RelayQueueFullError(full);
    return this.#insert(queue, q, record);
  }

  async partStats(queue: string, part: string): Promise<Totals> {
    this.#open();
    const counter = this.#queues.get(queue)?.parts.get(partKey(part));
    return counter === undefined ? EMPTY_TOTALS : { count: counter.count, bytes: counter.bytes };
  }

  #insert(recipient: string, known: Queue | undefined, record: QueueRecord): AppendResult {
    let queue = known;
    if (queue === undefined) {
      // Kept after it empties: its nextSeq is what keeps seqs from being reused.
      queue = { nextSeq: 1, bytes: 0, senders: new Map(), parts: new Map(), bySeq: new Map(), byId: new Map() };
      this.#queues.set(recipient, queue);
    }
    for (const counter of countersOf(queue, record, true)) {
      counter.count++;
      counter.bytes += record.bytes;
    }
    // Member by member, not `{ ...record, ... }` (decision 0733).
    const row: Row = {
      id: record.id,
      sender: record.sender,
      body: record.body,
      expiresAt: record.expiresAt,
      bytes: record.bytes,
      notify: record.notify,
      evidence: record.evidence,
      part: record.part,
      recipient,
      seq: queue.nextSeq++,
      order: this.#order++,
      delivered: false,
      dueAt: record.dueAt,
      queuedAt: Date.now(),
    };
    if (row.dueAt !== undefined) this.#due.add(row);
    queue.bySeq.set(row.seq, row);
    queue.byId.set(row.id, row);
    queue.bytes += row.bytes;
    this.#totals.count++;
    this.#totals.bytes += row.bytes;
    return { status: 'queued', seq: row.seq };
  }

  async after(recipient: string, cursor: number | string | undefined, limit: number, now?: number): Promise<QueuePage> {
    this.#open();
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const queue = this.#queues.get(recipient);
    let from = 0;
    if (typeof cursor === 'number') {
      checkSeq(cursor, 'cursor');
      from = cursor;
    } else if (typeof cursor === 'string') from = queue?.byId.get(cursor)?.seq ?? 0;
    const messages: QueuedMessage[] = [];
    let more = false;
    for (const row of queue?.bySeq.values() ?? []) {
      if (row.seq <= from || (now !== undefined && row.expiresAt <= now)) continue;
      if (messages.length === n) {
        more = true;
        break;
      }
      messages.push(message(row));
    }
    return { messages, next: messages.at(-1)?.seq ?? from, more };
  }

  async get(recipient: string, id: string): Promise<QueuedMessage | undefined> {
    this.#open();
    const row = this.#queues.get(recipient)?.byId.get(id);
    return row === undefined ? undefined : message(row);
  }

  async claimDue(now: number, limit: number, leaseMs: number): Promise<QueuedMessage[]> {
    this.#open();
    const n = checkClaim(now, limit, leaseMs);
    const due = [...this.#due]
      .filter((row) => row.dueAt! <= now && row.expiresAt > now)
      .sort((a, b) => a.dueAt! - b.dueAt! || a.order - b.order)
      .slice(0, n);
    for (const row of due) row.dueAt = now + leaseMs;
    return due.map(message);
  }

  async ack(recipient: string, ids: readonly string[]): Promise<QueueRemoval[]> {
    this.#open();
    checkIds(ids);
    const queue = this.#queues.get(recipient);
    if (queue === undefined) return [];
    const rows = [...new Set(ids)].flatMap((id) => queue.byId.get(id) ?? []);
    return this.#remove(rows.sort((a, b) => a.seq - b.seq));
  }

  async ackThrough(recipient: string, id: string): Promise<QueueRemoval[]> {
    this.#open();
    const queue = this.#queues.get(recipient);
    const last = queue?.byId.get(id);
    if (queue === undefined || last === undefined) return [];
    const rows: Row[] = [];
    for (const row of queue.bySeq.values()) {
      if (row.seq > last.seq) break;
      rows.push(row);
    }
    return this.#remove(rows);
  }

  async markDelivered(recipient: string, seqs: readonly number[]): Promise<QueueRemoval[]> {
    this.#open();
    checkSeqs(seqs);
    const queue = this.#queues.get(recipient);
    const marked: QueueRemoval[] = [];
    for (const seq of [...new Set(seqs)].sort((a, b) => a - b)) {
      const row = queue?.bySeq.get(seq);
      if (row === undefined || row.delivered) continue;
      row.delivered = true;
      marked.push(removal(row, false));
    }
    return marked;
  }

  async undelivered(recipient: string, now: number, exceptSender?: string): Promise<number> {
    this.#open();
    let n = 0;
    for (const row of this.#queues.get(recipient)?.bySeq.values() ?? []) {
      if (!row.delivered && row.expiresAt > now && row.sender !== exceptSender) n++;
    }
    return n;
  }

  async sweepExpired(now: number, batch: number): Promise<QueueRemoval[]> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    const expired: Row[] = [];
    for (const queue of this.#queues.values())
      for (const row of queue.bySeq.values()) if (row.expiresAt <= now) expired.push(row);
    expired.sort((a, b) => a.expiresAt - b.expiresAt || a.order - b.order);
    return this.#remove(expired.slice(0, n));
  }

  async stats(recipient: string): Promise<Totals> {
    this.#open();
    const queue = this.#queues.get(recipient);
    return queue === undefined ? EMPTY_TOTALS : { count: queue.bySeq.size, bytes: queue.bytes };
  }

  async recipientsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    this.#open();
    checkPrefix(prefix);
    const n = clampCount(limit, MAX_RECIPIENTS_PER_CALL, 'limit');
    const found: string[] = [];
    for (const [recipient, queue] of this.#queues) {
      if (found.length >= n) break;
      if (queue.bySeq.size > 0 && recipient.startsWith(prefix)) found.push(recipient);
    }
    return found;
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#totals };
  }

  /** `StoreInventory.queues` (`MemoryRelayStores.inventory`): the queues holding messages, by key. */
  async inventory(after: string | undefined, limit: number): Promise<InventoryPage<QueueOverview>> {
    this.#open();
    const args = inventoryArgs(after, limit);
    const keys = [...this.#queues]
      .filter(([key, queue]) => queue.bySeq.size > 0 && compareKeys(key, args.after) > 0)
      .map(([key]) => key)
      .sort(compareKeys)
      .slice(0, args.limit + 1);
    const rows = keys.map((recipient) => {
      const queue = this.#queues.get(recipient)!;
      const oldest = queue.bySeq.values().next().value as Row;
      return { recipient, count: queue.bySeq.size, bytes: queue.bytes, oldestAt: oldest.queuedAt };
    });
    return inventoryPage(rows, args.limit, (row) => row.recipient);
  }

  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  #remove(rows: readonly Row[]): QueueRemoval[] {
    return rows.map((row) => {
      const queue = this.#queues.get(row.recipient)!;
      queue.bySeq.delete(row.seq);
      queue.byId.delete(row.id);
      this.#due.delete(row);
      queue.bytes -= row.bytes;
      for (const counter of countersOf(queue, row, false)) {
        counter.count--;
        counter.bytes -= row.bytes;
      }
      if (queue.senders.get(row.sender)?.count === 0) queue.senders.delete(row.sender);
      if (row.part !== undefined) {
        const keys = partKeys(row.part, row.sender);
        for (const key of [keys.part, keys.partSender]) if (queue.parts.get(key)?.count === 0) queue.parts.delete(key);
      }
      this.#totals.count--;
      this.#totals.bytes -= row.bytes;
      return removal(row, row.delivered);
    });
  }
}

/** The counters a message counts in: its sender's part of the queue, and in a partitioned queue its part's two. */
function countersOf(queue: Queue, record: Pick<QueueRecord, 'sender' | 'part'>, create: boolean): Counter[] {
  const counter = (map: Map<string, Counter>, key: string): Counter => {
    let c = map.get(key);
    if (c === undefined) {
      c = { count: 0, bytes: 0 };
      if (create) map.set(key, c);
    }
    return c;
  };
  const counters = [counter(queue.senders, record.sender)];
  if (record.part !== undefined) {
    const keys = partKeys(record.part, record.sender);
    counters.push(counter(queue.parts, keys.part), counter(queue.parts, keys.partSender));
  }
  return counters;
}

function removal(row: Row, delivered: boolean): QueueRemoval {
  const { recipient, seq, id, sender, notify, evidence } = row;
  return { recipient, seq, id, sender, delivered, notify, evidence };
}

function message(row: Row): QueuedMessage {
  const { recipient, seq, id, sender, body, expiresAt, bytes, delivered, notify, evidence } = row;
  return { recipient, seq, id, sender, body, expiresAt, bytes, delivered, notify, evidence };
}
