import type { BoxEventRecord } from '../contracts/box-input.js';
import type { AsyncBoxLedger } from '../contracts/box-rules.js';
import type { Lane } from '../contracts/box-store.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import type { PublishFacts } from './postgres-box-batch.js';
import { LANE_CODE, BOX_SQL as SQL } from './postgres-box-sql.js';
import type { BoxStatement, BoxTx } from './postgres-box-writer.js';

/** A stored event as the rules see it: enough to delete it and take it out of every total. */
interface Victim {
  readonly id: string;
  readonly recipient: string;
  readonly sender: string;
  readonly size: number;
}

/** What the facts query answers. */
export interface FactsRow {
  known: boolean;
  recipient_card: boolean;
  sender_card: boolean;
  contact: boolean;
  box_count: number;
  box_bytes: number;
  r_count: number;
  r_bytes: number;
  s_count: number;
  s_bytes: number;
  p_count: number;
  p_bytes: number;
}

export function factsOf(row: FactsRow): PublishFacts {
  return {
    known: row.known,
    recipientCard: row.recipient_card,
    senderCard: row.sender_card,
    contact: row.contact,
    box: { count: row.box_count, bytes: row.box_bytes },
    recipient: { count: row.r_count, bytes: row.r_bytes },
    sender: { count: row.s_count, bytes: row.s_bytes },
    pair: { count: row.p_count, bytes: row.p_bytes },
  };
}

const minus = (t: Totals, removed: Totals | undefined): Totals =>
  removed === undefined ? t : { count: t.count - removed.count, bytes: t.bytes - removed.bytes };

/** Adds one event of `size` bytes to the removed totals of `key`. */
function note(map: Map<string, { count: number; bytes: number }>, key: string, size: number): void {
  const t = map.get(key);
  if (t === undefined) map.set(key, { count: 1, bytes: size });
  else {
    t.count++;
    t.bytes += size;
  }
}

/**
 * The ledger of one publish (`admitEventAsync`). The facts about the event's own recipient,
 * sender and pair and the box's come with the publish (read under their locks), so the common
 * publish asks the database nothing before its insert. Evictions are deferred: `remove` only
 * records the victim, later searches skip what was removed and totals subtract it, and the
 * victims are deleted in one statement just before the insert. A refused publish has then
 * deleted nothing: nothing to undo, no savepoint.
 *
 * "The sender with the most bytes" among rows some of which lost bytes to removals: the best after
 * removals is among the first (k + 1) rows in index order, k the number of senders that lost
 * bytes (one of those rows lost nothing, and it beats every row after it).
 */
export class PublishLedger implements AsyncBoxLedger<Victim> {
  readonly #tx: BoxTx;
  readonly #event: BoxEventRecord;
  readonly #facts: PublishFacts;
  readonly #victims: Victim[] = [];
  readonly #victimIds: string[] = [];
  /** Count and bytes removed so far, per recipient, per sender and per pair. */
  readonly #removedFromRecipient = new Map<string, { count: number; bytes: number }>();
  readonly #removedFromSender = new Map<string, { count: number; bytes: number }>();
  readonly #removedFromPair = new Map<string, { count: number; bytes: number }>();
  #removedBytes = 0;

  constructor(tx: BoxTx, event: BoxEventRecord, facts: PublishFacts) {
    this.#tx = tx;
    this.#event = event;
    this.#facts = facts;
  }

  hasEvent(id: string): boolean | Promise<boolean> {
    return id === this.#event.id ? this.#facts.known : this.#exists(SQL.hasEvent, [id]);
  }

  hasCard(key: string): boolean | Promise<boolean> {
    if (key === this.#event.recipient) return this.#facts.recipientCard;
    if (key === this.#event.sender) return this.#facts.senderCard;
    return this.#exists(SQL.hasCard, [key]);
  }

  isContact(recipient: string, sender: string): boolean | Promise<boolean> {
    return this.#ours(recipient, sender) ? this.#facts.contact : this.#exists(SQL.isContact, [recipient, sender]);
  }

  pair(recipient: string, sender: string): Totals | Promise<Totals> {
    const removed = this.#removedFromPair.get(pairKey(recipient, sender));
    if (this.#ours(recipient, sender)) return minus(this.#facts.pair, removed);
    return this.#totals(SQL.pair, [recipient, sender]).then((t) => minus(t, removed));
  }

  sender(sender: string): Totals | Promise<Totals> {
    const removed = this.#removedFromSender.get(sender);
    if (sender === this.#event.sender) return minus(this.#facts.sender, removed);
    return this.#totals(SQL.sender, [sender]).then((t) => minus(t, removed));
  }

  recipient(recipient: string): Totals | Promise<Totals> {
    const removed = this.#removedFromRecipient.get(recipient);
    if (recipient === this.#event.recipient) return minus(this.#facts.recipient, removed);
    return this.#totals(SQL.recipient, [recipient]).then((t) => minus(t, removed));
  }

  box(): Totals {
    const { count, bytes } = this.#facts.box;
    return { count: count - this.#victims.length, bytes: bytes - this.#removedBytes };
  }

  weakestStranger(recipient: string, maxStrength: number): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.weakestStranger, [recipient, Math.min(maxStrength, 1e9), this.#victimIds]);
  }

  async largestOtherSender(recipient: string, exclude: string): Promise<string | undefined> {
    const lost = [...this.#removedFromPair.keys()].filter((k) => k.startsWith(`${recipient}\n`)).length;
    const rows = await this.#tx.query<{ sender: string; bytes: number }>(SQL.largestOtherSenders, [
      recipient,
      exclude,
      lost + 1,
    ]);
    return largest(rows, (sender) => this.#removedFromPair.get(pairKey(recipient, sender)))?.sender;
  }

  oldestOfPair(recipient: string, sender: string): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.oldestOfPair, [recipient, sender, this.#victimIds]);
  }

  async largestOtherSenderInBox(exclude: string): Promise<{ sender: string; bytes: number } | undefined> {
    const rows = await this.#tx.query<{ sender: string; bytes: number }>(SQL.largestOtherSendersInBox, [
      exclude,
      this.#removedFromSender.size + 1,
    ]);
    return largest(rows, (sender) => this.#removedFromSender.get(sender));
  }

  oldestOfSender(sender: string): Promise<Victim | undefined> {
    return this.#first<Victim>(SQL.oldestOfSender, [sender, this.#victimIds]);
  }

  remove(victim: Victim): void {
    this.#victims.push(victim);
    this.#victimIds.push(victim.id);
    note(this.#removedFromRecipient, victim.recipient, victim.size);
    note(this.#removedFromSender, victim.sender, victim.size);
    note(this.#removedFromPair, pairKey(victim.recipient, victim.sender), victim.size);
    this.#removedBytes += victim.size;
  }

  async insert(event: BoxEventRecord, lane: Lane): Promise<number> {
    if (this.#victimIds.length > 0) await this.#tx.query(SQL.removeMany, [this.#victimIds]);
    const rows = await this.#tx.query<{ seq: number }>(SQL.insert, [
      event.recipient,
      event.id,
      event.sender,
      LANE_CODE[lane],
      event.strength,
      event.expiresAt,
      event.size,
      event.json,
    ]);
    return rows[0]!.seq;
  }

  #ours(recipient: string, sender: string): boolean {
    return recipient === this.#event.recipient && sender === this.#event.sender;
  }

  async #exists(query: BoxStatement, values: readonly unknown[]): Promise<boolean> {
    return (await this.#tx.query(query, values)).length > 0;
  }

  async #totals(query: BoxStatement, values: readonly unknown[]): Promise<Totals> {
    return (await this.#first<Totals>(query, values)) ?? EMPTY_TOTALS;
  }

  async #first<R>(query: BoxStatement, values: readonly unknown[]): Promise<R | undefined> {
    return (await this.#tx.query<R>(query, values))[0];
  }
}

const pairKey = (recipient: string, sender: string) => `${recipient}\n${sender}`;

/** The row with the most bytes once `removed` is taken off (ties: lowest key), if any has bytes left. */
function largest(
  rows: readonly { sender: string; bytes: number }[],
  removed: (sender: string) => Totals | undefined,
): { sender: string; bytes: number } | undefined {
  let best: { sender: string; bytes: number } | undefined;
  for (const row of rows) {
    const bytes = row.bytes - (removed(row.sender)?.bytes ?? 0);
    if (bytes <= 0) continue;
    if (best === undefined || bytes > best.bytes || (bytes === best.bytes && row.sender < best.sender)) {
      best = { sender: row.sender, bytes };
    }
  }
  return best;
}
