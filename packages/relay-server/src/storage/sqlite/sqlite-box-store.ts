import type { OhanCard, OhanEvent } from '@wmp/ohan-seal';
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
import { eventPageOf, textPageOf } from '../contracts/fetch-page.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';
import { BoxTotalsCache } from './box-totals-cache.js';
import { type BoxStatements, boxStatements, type EventRef, eventRow } from './sqlite-box-statements.js';
import type { WriteQueue } from './write-queue.js';

const NO_EXPIRY_FILTER = Number.MIN_SAFE_INTEGER;

/**
 * The OHAN box on SQLite. Most publishes take the fast path: the running totals are read from a
 * write-back cache (`BoxTotalsCache`, exact, written once per transaction), `laneWithoutEviction`
 * decides that the event fits with no eviction, and the publish is one INSERT, with no savepoint;
 * an id already stored inserts nothing and answers `exists`. Every other publish (a refusal or an
 * eviction) writes the cache first and runs `admitEvent` (the box rules shared with the memory
 * box) over the tables, in its own savepoint: evictions happen as the rules go, and a refusal
 * rolls all of them back. Either way the totals change in the same transaction as the events.
 */
export class SqliteBoxStore implements BoxStore {
  readonly limits: BoxLimits;
  readonly #writer: WriteQueue;
  readonly #s: BoxStatements;
  readonly #totals: BoxTotalsCache;
  readonly #view: BoxTotalsView;
  readonly #ledger: BoxLedger<EventRef>;
  /** (recipient, sender) of every row the ledger changed in the current slow-path publish. */
  readonly #touched: { recipient: string; sender: string }[] = [];

  constructor(db: BetterSqlite3.Database, writer: WriteQueue, limits: Partial<BoxLimits> = {}) {
    this.limits = checkBoxLimits(limits);
    this.#writer = writer;
    const s = boxStatements(db);
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
    return eventPageOf(await this.fetchText(recipient, after, limit, now));
  }

  async fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    return textPageOf(this.#s.page.all(recipient, after, now ?? NO_EXPIRY_FILTER, n + 1), n, after);
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

  async holdsAny(key: string, now: number): Promise<boolean> {
    this.#open();
    return this.#s.holdsAny.get(key, now, key, key, key) === 1;
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
