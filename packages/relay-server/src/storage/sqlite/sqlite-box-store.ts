import type { OhanCard, OhanEvent, StoredEvent } from '@wmp/ohan-seal';
import type BetterSqlite3 from 'better-sqlite3';
import { allowList, type BoxEventRecord, boxEventRecord, cardTime } from '../contracts/box-input.js';
import { checkBoxLimits } from '../contracts/box-limits.js';
import { admitEvent, type BoxLedger, type BoxTotalsView, laneWithoutEviction } from '../contracts/box-rules.js';
import type {
  BoxLimits,
  BoxStore,
  CardResult,
  FetchPage,
  FetchPageText,
  Lane,
  PublishResult,
} from '../contracts/box-store.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';
import { BoxTotalsCache } from './box-totals-cache.js';
import type { WriteQueue } from './write-queue.js';

/** A stored event as the rules see it: enough to take it out of every total. */
interface EventRef {
  rowid: number;
  recipient: string;
  sender: string;
  size: number;
}

const LANE_CODE: Record<Lane, number> = { contact: 0, stranger: 1 };
const REF = 'rowid, recipient, sender, size';
const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;

function statements(db: BetterSqlite3.Database) {
  return {
    hasEvent: db.prepare<[string], number>('SELECT 1 FROM ohan_events WHERE id = ?').pluck(),
    hasCard: db.prepare<[string], number>('SELECT 1 FROM ohan_cards WHERE key = ?').pluck(),
    isContact: db
      .prepare<[string, string], number>('SELECT 1 FROM ohan_allow WHERE recipient = ? AND contact = ?')
      .pluck(),
    pair: db.prepare<[string, string], Totals>(
      'SELECT count, bytes FROM ohan_pairs WHERE recipient = ? AND sender = ?',
    ),
    sender: db.prepare<[string], Totals>('SELECT count, bytes FROM ohan_senders WHERE sender = ?'),
    recipient: db.prepare<[string], Totals>('SELECT count, bytes FROM ohan_recipients WHERE recipient = ?'),
    box: db.prepare<[], Totals>("SELECT count, bytes FROM totals WHERE name = 'ohan_box'"),
    weakestStranger: db.prepare<[string, number], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE recipient = ? AND lane = 1 AND strength <= ?
       ORDER BY strength, rowid LIMIT 1`,
    ),
    largestOtherSender: db
      .prepare<[string, string], string>(
        `SELECT sender FROM ohan_pairs WHERE recipient = ? AND sender <> ? AND bytes > 0
       ORDER BY bytes DESC, sender LIMIT 1`,
      )
      .pluck(),
    oldestOfPair: db.prepare<[string, string], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE recipient = ? AND sender = ? ORDER BY rowid LIMIT 1`,
    ),
    largestOtherSenderInBox: db.prepare<[string], { sender: string; bytes: number }>(
      'SELECT sender, bytes FROM ohan_senders WHERE sender <> ? AND bytes > 0 ORDER BY bytes DESC, sender LIMIT 1',
    ),
    oldestOfSender: db.prepare<[string], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE sender = ? ORDER BY rowid LIMIT 1`,
    ),
    deleteRow: db.prepare('DELETE FROM ohan_events WHERE rowid = ?'),
    deleteId: db.prepare<[string, string], EventRef>(
      'DELETE FROM ohan_events WHERE recipient = ? AND id = ? RETURNING rowid, recipient, sender, size',
    ),
    expired: db.prepare<[number, number], EventRef>(
      `SELECT ${REF} FROM ohan_events WHERE expires_at <= ? ORDER BY expires_at, rowid LIMIT ?`,
    ),
    nextSeq: db
      .prepare<[string, number], number>(
        `INSERT INTO ohan_recipients (recipient, next_seq, count, bytes) VALUES (?, 2, 1, ?)
       ON CONFLICT (recipient) DO UPDATE SET next_seq = next_seq + 1, count = count + 1, bytes = bytes + excluded.bytes
       RETURNING next_seq - 1`,
      )
      .pluck(),
    insert: db.prepare(INSERT_EVENT),
    // The fast path's only statement: an id already stored inserts nothing (the answer is "exists").
    insertNew: db.prepare(`${INSERT_EVENT} ON CONFLICT (id) DO NOTHING`),
    savepoint: db.prepare('SAVEPOINT box_admit'),
    rollbackTo: db.prepare('ROLLBACK TO box_admit'),
    release: db.prepare('RELEASE box_admit'),
    addSender: db.prepare(
      `INSERT INTO ohan_senders (sender, count, bytes) VALUES (?, 1, ?)
       ON CONFLICT (sender) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes`,
    ),
    addPair: db.prepare(
      `INSERT INTO ohan_pairs (recipient, sender, count, bytes) VALUES (?, ?, 1, ?)
       ON CONFLICT (recipient, sender) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes`,
    ),
    addBox: db.prepare("UPDATE totals SET count = count + ?, bytes = bytes + ? WHERE name = 'ohan_box'"),
    subRecipient: db.prepare('UPDATE ohan_recipients SET count = count - ?, bytes = bytes - ? WHERE recipient = ?'),
    // Sender and pair rows go when they reach zero: they only exist for what is stored.
    subSender: db.prepare('UPDATE ohan_senders SET count = count - ?, bytes = bytes - ? WHERE sender = ?'),
    dropSender: db.prepare('DELETE FROM ohan_senders WHERE sender = ? AND count <= 0'),
    subPair: db.prepare(
      'UPDATE ohan_pairs SET count = count - ?, bytes = bytes - ? WHERE recipient = ? AND sender = ?',
    ),
    dropPair: db.prepare('DELETE FROM ohan_pairs WHERE recipient = ? AND sender = ? AND count <= 0'),
    page: db.prepare<[string, number, number, number], { seq: number; body: string }>(
      'SELECT seq, body FROM ohan_events WHERE recipient = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?',
    ),
    clearAllow: db.prepare('DELETE FROM ohan_allow WHERE recipient = ?'),
    addAllow: db.prepare('INSERT INTO ohan_allow (recipient, contact) VALUES (?, ?)'),
    allow: db.prepare<[string], string>('SELECT contact FROM ohan_allow WHERE recipient = ? ORDER BY rowid').pluck(),
    cardTs: db.prepare<[string], number>('SELECT ts FROM ohan_cards WHERE key = ?').pluck(),
    putCard: db.prepare(
      `INSERT INTO ohan_cards (key, ts, body, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET ts = excluded.ts, body = excluded.body, expires_at = excluded.expires_at`,
    ),
    refreshCard: db.prepare('UPDATE ohan_cards SET expires_at = max(expires_at, ?) WHERE key = ?'),
    card: db.prepare<[string, number], string>('SELECT body FROM ohan_cards WHERE key = ? AND expires_at > ?').pluck(),
    cardCount: db.prepare<[], number>("SELECT count FROM totals WHERE name = 'ohan_cards'").pluck(),
    addCards: db.prepare("UPDATE totals SET count = count + ? WHERE name = 'ohan_cards'"),
    knows: db
      .prepare<[string, number, string, string], number>(
        `SELECT EXISTS (SELECT 1 FROM ohan_cards WHERE key = ? AND expires_at > ?)
         OR EXISTS (SELECT 1 FROM ohan_recipients WHERE recipient = ? AND count > 0)
         OR EXISTS (SELECT 1 FROM ohan_senders WHERE sender = ? AND count > 0)`,
      )
      .pluck(),
    expiredCards: db.prepare<[number, number]>(
      'DELETE FROM ohan_cards WHERE rowid IN (SELECT rowid FROM ohan_cards WHERE expires_at <= ? LIMIT ?)',
    ),
  };
}

/** The one event insert; `eventRow` binds its columns in order. */
const INSERT_EVENT = `INSERT INTO ohan_events (recipient, seq, id, sender, lane, strength, expires_at, size, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function eventRow(record: BoxEventRecord, lane: Lane, seq: number) {
  return [
    record.recipient,
    seq,
    record.id,
    record.sender,
    LANE_CODE[lane],
    record.strength,
    record.expiresAt,
    record.size,
    record.json,
  ] as const;
}

/**
 * The OHAN box on SQLite. Most publishes take the fast path: the running totals are read from a
 * write-back cache (`BoxTotalsCache`, exact, written once per transaction), `laneWithoutEviction`
 * decides that the event fits with no eviction, and the publish is one INSERT, with no savepoint;
 * an id already stored inserts nothing and answers `exists`. Every other publish (a refusal or an
 * eviction) writes the cache first and runs `admitEvent` (the §4.7 rules shared with the memory
 * box) over the tables, in its own savepoint: evictions happen as the rules go, and a refusal
 * rolls all of them back. Either way the totals change in the same transaction as the events.
 */
export class SqliteBoxStore implements BoxStore {
  readonly limits: BoxLimits;
  readonly #writer: WriteQueue;
  readonly #s: ReturnType<typeof statements>;
  readonly #totals: BoxTotalsCache;
  readonly #view: BoxTotalsView;
  readonly #ledger: BoxLedger<EventRef>;
  /** (recipient, sender) of every row the ledger changed in the current slow-path publish. */
  readonly #touched: { recipient: string; sender: string }[] = [];

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<BoxLimits> = {}) {
    this.limits = checkBoxLimits(limits);
    this.#writer = writer;
    const s = statements(db);
    this.#s = s;
    const totals = new BoxTotalsCache(db);
    this.#totals = totals;
    writer.onBeforeCommit(() => totals.write());
    writer.onRollback(() => totals.clear());
    const hasCard = (key: string) => s.hasCard.get(key) !== undefined;
    const isContact = (recipient: string, sender: string) => s.isContact.get(recipient, sender) !== undefined;
    this.#view = {
      hasCard,
      isContact,
      pair: (recipient, sender) => totals.pair(recipient, sender),
      sender: (sender) => totals.sender(sender),
      recipient: (recipient) => totals.recipient(recipient),
      box: () => totals.box(),
    };
    this.#ledger = {
      hasEvent: (id) => s.hasEvent.get(id) !== undefined,
      hasCard,
      isContact,
      pair: (recipient, sender) => s.pair.get(recipient, sender) ?? EMPTY_TOTALS,
      sender: (sender) => s.sender.get(sender) ?? EMPTY_TOTALS,
      recipient: (recipient) => s.recipient.get(recipient) ?? EMPTY_TOTALS,
      box: () => s.box.get()!,
      weakestStranger: (recipient, maxStrength) => s.weakestStranger.get(recipient, Math.min(maxStrength, 1e9)),
      largestOtherSender: (recipient, exclude) => s.largestOtherSender.get(recipient, exclude),
      oldestOfPair: (recipient, sender) => s.oldestOfPair.get(recipient, sender),
      largestOtherSenderInBox: (exclude) => s.largestOtherSenderInBox.get(exclude),
      oldestOfSender: (sender) => s.oldestOfSender.get(sender),
      remove: (ref) => {
        this.#touched.push(ref);
        s.deleteRow.run(ref.rowid);
        this.#subtract([ref]);
      },
      insert: (record, lane) => {
        this.#touched.push(record);
        return this.#insert(record, lane);
      },
    };
  }

  async publish(event: OhanEvent, json?: string): Promise<PublishResult> {
    this.#open();
    const record = boxEventRecord(event, json);
    return this.#writer.runAtomic(() => this.#admit(record));
  }

  /** One publish inside the writer's transaction; atomic by itself (see `WriteQueue.runAtomic`). */
  #admit(record: BoxEventRecord): PublishResult {
    const lane = laneWithoutEviction(this.#view, record, this.limits);
    if (lane === undefined) return this.#admitByRules(record);
    const seq = this.#totals.recipient(record.recipient).nextSeq;
    const inserted = this.#s.insertNew.run(...eventRow(record, lane, seq));
    if (inserted.changes === 0) return { status: 'exists', id: record.id };
    this.#totals.added(record);
    return { status: 'stored', id: record.id, seq, evicted: 0 };
  }

  /** Refusals and evictions: `admitEvent` over the tables (the cache written first), in a savepoint. */
  #admitByRules(record: BoxEventRecord): PublishResult {
    const s = this.#s;
    this.#totals.write();
    this.#touched.length = 0;
    s.savepoint.run();
    try {
      const result = admitEvent(this.#ledger, record, this.limits);
      // A refusal may follow evictions: rolled back, so nothing changed.
      if (result.status === 'refused') s.rollbackTo.run();
      s.release.run();
      return result;
    } catch (error) {
      try {
        s.rollbackTo.run();
        s.release.run();
      } catch {
        // SQLite already rolled the transaction back: the writer rejects the whole batch.
      }
      throw error;
    } finally {
      // Those rows changed under the cache (or were rolled back to what it held): read them again.
      this.#totals.forget(this.#touched);
      this.#touched.length = 0;
    }
  }

  async fetch(recipient: string, after: number, limit: number, now?: number): Promise<FetchPage> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const rows = this.#s.page.all(recipient, after, now ?? NO_EXPIRY_FILTER, n + 1);
    const more = rows.length > n;
    const events = rows
      .slice(0, n)
      .map((row): StoredEvent => ({ ...(JSON.parse(row.body) as OhanEvent), seq: row.seq }));
    return { events, next: events.at(-1)?.seq ?? after, more };
  }

  async fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const rows = this.#s.page.all(recipient, after, now ?? NO_EXPIRY_FILTER, n + 1);
    const items = rows.slice(0, n).map((row) => ({ seq: row.seq, json: row.body }));
    return { items, next: items.at(-1)?.seq ?? after, more: rows.length > n };
  }

  async delivered(recipient: string, ids: readonly string[]): Promise<number> {
    this.#open();
    checkIds(ids);
    if (ids.length === 0) return 0;
    return this.#writer.run(() => {
      const removed: EventRef[] = [];
      for (const id of new Set(ids)) {
        const ref = this.#s.deleteId.get(recipient, id);
        if (ref !== undefined) removed.push(ref);
      }
      // Last: if a statement above throws, the savepoint undoes it and the cache is untouched.
      this.#totals.removed(removed);
      return removed.length;
    });
  }

  async putAllow(recipient: string, contacts: readonly string[]): Promise<void> {
    this.#open();
    const list = allowList(contacts, this.limits.maxContacts);
    await this.#writer.run(() => {
      this.#s.clearAllow.run(recipient);
      for (const contact of list) this.#s.addAllow.run(recipient, contact);
    });
  }

  async getAllow(recipient: string): Promise<string[]> {
    this.#open();
    return this.#s.allow.all(recipient);
  }

  async putCard(card: OhanCard, now: number): Promise<CardResult> {
    this.#open();
    const ts = cardTime(card);
    const json = JSON.stringify(card);
    const expiresAt = now + this.limits.cardTtlSeconds * 1000;
    return this.#writer.run((): CardResult => {
      const current = this.#s.cardTs.get(card.key);
      if (current !== undefined && current >= ts) {
        if (current === ts) this.#s.refreshCard.run(expiresAt, card.key);
        return 'stale';
      }
      if (current === undefined) {
        if (this.#s.cardCount.get()! >= this.limits.maxCards) return 'full';
        this.#s.addCards.run(1);
      }
      this.#s.putCard.run(card.key, ts, json, expiresAt);
      return current === undefined ? 'stored' : 'replaced';
    });
  }

  async getCard(key: string, now: number): Promise<OhanCard | undefined> {
    this.#open();
    const body = this.#s.card.get(key, now);
    return body === undefined ? undefined : (JSON.parse(body) as OhanCard);
  }

  async knows(key: string, now: number): Promise<boolean> {
    this.#open();
    return this.#s.knows.get(key, now, key, key) === 1;
  }

  async sweepExpiredCards(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(() => {
      const { changes } = this.#s.expiredCards.run(now, n);
      if (changes > 0) this.#s.addCards.run(-changes);
      return changes;
    });
  }

  async cardCount(): Promise<number> {
    this.#open();
    return this.#s.cardCount.get()!;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    return this.#writer.run(() => {
      const rows = this.#s.expired.all(now, n);
      for (const row of rows) this.#s.deleteRow.run(row.rowid);
      this.#totals.removed(rows);
      return rows.length;
    });
  }

  async recipientStats(recipient: string): Promise<Totals> {
    this.#open();
    return { ...(this.#s.recipient.get(recipient) ?? EMPTY_TOTALS) };
  }

  async senderStats(sender: string): Promise<Totals> {
    this.#open();
    return { ...(this.#s.sender.get(sender) ?? EMPTY_TOTALS) };
  }

  async totals(): Promise<Totals> {
    this.#open();
    return { ...this.#s.box.get()! };
  }

  #open(): void {
    if (this.#writer.closed) throw new StoreClosedError();
  }

  #insert(record: BoxEventRecord, lane: Lane): number {
    const s = this.#s;
    const seq = s.nextSeq.get(record.recipient, record.size)!;
    s.insert.run(...eventRow(record, lane, seq));
    s.addSender.run(record.sender, record.size);
    s.addPair.run(record.recipient, record.sender, record.size);
    s.addBox.run(1, record.size);
    return seq;
  }

  /** Takes deleted events out of every total (grouped, so a sweep of 1000 is a few updates). */
  #subtract(refs: readonly EventRef[]): void {
    if (refs.length === 0) return;
    const s = this.#s;
    const recipients = new Map<string, { count: number; bytes: number }>();
    const senders = new Map<string, { count: number; bytes: number }>();
    const pairs = new Map<string, { recipient: string; sender: string; count: number; bytes: number }>();
    let bytes = 0;
    for (const ref of refs) {
      add(recipients, ref.recipient, ref.size);
      add(senders, ref.sender, ref.size);
      const key = `${ref.recipient}\n${ref.sender}`;
      const pair = pairs.get(key) ?? { recipient: ref.recipient, sender: ref.sender, count: 0, bytes: 0 };
      pair.count++;
      pair.bytes += ref.size;
      pairs.set(key, pair);
      bytes += ref.size;
    }
    for (const [recipient, t] of recipients) s.subRecipient.run(t.count, t.bytes, recipient);
    for (const [sender, t] of senders) {
      s.subSender.run(t.count, t.bytes, sender);
      s.dropSender.run(sender);
    }
    for (const p of pairs.values()) {
      s.subPair.run(p.count, p.bytes, p.recipient, p.sender);
      s.dropPair.run(p.recipient, p.sender);
    }
    s.addBox.run(-refs.length, -bytes);
  }
}

function add(totals: Map<string, { count: number; bytes: number }>, key: string, size: number): void {
  const t = totals.get(key) ?? { count: 0, bytes: 0 };
  t.count++;
  t.bytes += size;
  totals.set(key, t);
}
