import type { OhanCard, OhanEvent } from '@wmp/ohan-seal';
import { allowList, type BoxEventRecord, boxEventRecord, cardTime } from '../contracts/box-input.js';
import { checkBoxLimits } from '../contracts/box-limits.js';
import { admitEvent, type BoxLedger } from '../contracts/box-rules.js';
import type {
  BoxLimits,
  BoxStore,
  CardResult,
  FetchPage,
  FetchPageText,
  Lane,
  PublishResult,
} from '../contracts/box-store.js';
import { eventPageOf } from '../contracts/fetch-page.js';
import { checkIds, checkSeq, clampCount, MAX_PAGE, MAX_SWEEP_BATCH } from '../contracts/limits.js';
import {
  type BoxOverview,
  compareKeys,
  type InventoryPage,
  inventoryArgs,
  inventoryPage,
} from '../contracts/store-inventory.js';
import { EMPTY_TOTALS, type Totals } from '../contracts/totals.js';
import { StoreClosedError } from '../errors.js';

interface Row extends BoxEventRecord {
  readonly seq: number;
  readonly lane: Lane;
  /** Arrival order across the box: what "oldest" means. */
  readonly order: number;
  /** When it was stored (ms since the epoch). */
  readonly storedAt: number;
  /** Taken out by an eviction of the publish in progress (undone if the publish is refused). */
  evicting: boolean;
}

interface Counter {
  count: number;
  bytes: number;
}

interface Queue extends Counter {
  nextSeq: number;
  /** By seq; Map order is seq order because seqs only grow. */
  readonly rows: Map<number, Row>;
}

interface SenderEntry extends Counter {
  /** In arrival order. */
  readonly rows: Set<Row>;
}

/**
 * The OHAN box in memory, for tests and `--ephemeral` relays: the same rules (`admitEvent`) and
 * the same observable behaviour as the SQLite box, checked by the same adapter suite. Eviction
 * searches scan (fine at test and ephemeral sizes); cap checks read running totals.
 */
export class MemoryBoxStore implements BoxStore {
  readonly limits: BoxLimits;
  readonly #events = new Map<string, Row>();
  readonly #queues = new Map<string, Queue>();
  readonly #senders = new Map<string, SenderEntry>();
  readonly #pairs = new Map<string, Map<string, Counter>>();
  readonly #box: Counter = { count: 0, bytes: 0 };
  readonly #allow = new Map<string, Set<string>>();
  readonly #cards = new Map<string, { readonly ts: number; readonly json: string; expiresAt: number }>();
  #order = 0;
  #closed = false;

  constructor(limits: Partial<BoxLimits> = {}) {
    this.limits = checkBoxLimits(limits);
  }

  async publish(event: OhanEvent, json?: string): Promise<PublishResult> {
    this.#open();
    const record = boxEventRecord(event, json);
    const evicting: Row[] = [];
    const result = admitEvent(this.#ledger(evicting), record, this.limits);
    if (result.status === 'refused') {
      for (const row of evicting) {
        row.evicting = false;
        this.#count(row, 1);
      }
    } else {
      for (const row of evicting) this.#forget(row);
    }
    return result;
  }

  async fetch(recipient: string, after: number, limit: number, now?: number): Promise<FetchPage> {
    return eventPageOf(await this.fetchText(recipient, after, limit, now));
  }

  async fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText> {
    this.#open();
    checkSeq(after, 'after');
    const n = clampCount(limit, MAX_PAGE, 'limit');
    const items: { seq: number; json: string }[] = [];
    let more = false;
    for (const row of this.#queues.get(recipient)?.rows.values() ?? []) {
      if (row.seq <= after || (now !== undefined && row.expiresAt <= now)) continue;
      if (items.length === n) {
        more = true;
        break;
      }
      items.push({ seq: row.seq, json: row.json });
    }
    return { items, next: items.at(-1)?.seq ?? after, more };
  }

  async delivered(recipient: string, ids: readonly string[]): Promise<number> {
    this.#open();
    checkIds(ids);
    let removed = 0;
    for (const id of ids) {
      const row = this.#events.get(id);
      if (row === undefined || row.recipient !== recipient) continue;
      this.#count(row, -1);
      this.#forget(row);
      removed++;
    }
    return removed;
  }

  async putAllow(recipient: string, contacts: readonly string[]): Promise<void> {
    this.#open();
    const list = allowList(contacts, this.limits.maxContacts);
    if (list.size === 0) this.#allow.delete(recipient);
    else this.#allow.set(recipient, list);
  }

  async getAllow(recipient: string): Promise<string[]> {
    this.#open();
    return [...(this.#allow.get(recipient) ?? [])];
  }

  async putCard(card: OhanCard, now: number): Promise<CardResult> {
    this.#open();
    const ts = cardTime(card);
    const expiresAt = now + this.limits.cardTtlSeconds * 1000;
    const current = this.#cards.get(card.key);
    if (current !== undefined && current.ts >= ts) {
      if (current.ts === ts) current.expiresAt = Math.max(current.expiresAt, expiresAt);
      return 'stale';
    }
    if (current === undefined && this.#cards.size >= this.limits.maxCards) return 'full';
    this.#cards.set(card.key, { ts, json: JSON.stringify(card), expiresAt });
    return current === undefined ? 'stored' : 'replaced';
  }

  async getCard(key: string, now: number): Promise<OhanCard | undefined> {
    this.#open();
    const card = this.#cards.get(key);
    return card === undefined || card.expiresAt <= now ? undefined : (JSON.parse(card.json) as OhanCard);
  }

  async knows(key: string, now: number): Promise<boolean> {
    this.#open();
    const card = this.#cards.get(key);
    if (card !== undefined && card.expiresAt > now) return true;
    return (this.#queues.get(key)?.count ?? 0) > 0 || (this.#senders.get(key)?.count ?? 0) > 0;
  }

  async holdsAny(key: string, now: number): Promise<boolean> {
    return this.#allow.has(key) || (await this.knows(key, now));
  }

  async sweepExpiredCards(now: number, batch: number): Promise<number> {
    this.#open();
    let left = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    let removed = 0;
    for (const [key, card] of this.#cards) {
      if (left === 0) break;
      if (card.expiresAt > now) continue;
      this.#cards.delete(key);
      left--;
      removed++;
    }
    return removed;
  }

  async cardCount(): Promise<number> {
    this.#open();
    return this.#cards.size;
  }

  async sweepExpired(now: number, batch: number): Promise<number> {
    this.#open();
    const n = clampCount(batch, MAX_SWEEP_BATCH, 'batch');
    const expired = [...this.#events.values()]
      .filter((row) => row.expiresAt <= now)
      .sort((a, b) => a.expiresAt - b.expiresAt || a.order - b.order)
      .slice(0, n);
    for (const row of expired) {
      this.#count(row, -1);
      this.#forget(row);
    }
    return expired.length;
  }

  async recipientStats(recipient: string): Promise<Totals> {
    this.#open();
    return totalsOf(this.#queues.get(recipient));
  }

  async senderStats(sender: string): Promise<Totals> {
    this.#open();
    return totalsOf(this.#senders.get(sender));
  }

  async totals(): Promise<Totals> {
    this.#open();
    return totalsOf(this.#box);
  }

  /** `StoreInventory.boxes` (`MemoryRelayStores.inventory`): the recipients holding events, by key. */
  async inventory(after: string | undefined, limit: number): Promise<InventoryPage<BoxOverview>> {
    this.#open();
    const args = inventoryArgs(after, limit);
    const keys = [...this.#queues]
      .filter(([key, queue]) => queue.count > 0 && compareKeys(key, args.after) > 0)
      .map(([key]) => key)
      .sort(compareKeys)
      .slice(0, args.limit + 1);
    const rows = keys.map((recipient) => {
      const queue = this.#queues.get(recipient)!;
      const oldest = [...queue.rows.values()].find((row) => !row.evicting);
      return { recipient, count: queue.count, bytes: queue.bytes, oldestAt: oldest?.storedAt };
    });
    return inventoryPage(rows, args.limit, (row) => row.recipient);
  }

  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  /** Adds (+1) or takes out (-1) one event from every total it counts in. */
  #count(row: Row, sign: 1 | -1): void {
    const bytes = sign * row.size;
    const queue = this.#queues.get(row.recipient)!;
    queue.count += sign;
    queue.bytes += bytes;
    const sender = this.#senders.get(row.sender)!;
    sender.count += sign;
    sender.bytes += bytes;
    const pair = this.#pairs.get(row.recipient)!.get(row.sender)!;
    pair.count += sign;
    pair.bytes += bytes;
    this.#box.count += sign;
    this.#box.bytes += bytes;
  }

  /** Drops a row (already out of the totals) from every index, and totals that reached zero. */
  #forget(row: Row): void {
    this.#events.delete(row.id);
    this.#queues.get(row.recipient)?.rows.delete(row.seq);
    const sender = this.#senders.get(row.sender);
    sender?.rows.delete(row);
    if (sender?.count === 0) this.#senders.delete(row.sender);
    const pairs = this.#pairs.get(row.recipient);
    if (pairs?.get(row.sender)?.count === 0) pairs.delete(row.sender);
    if (pairs?.size === 0) this.#pairs.delete(row.recipient);
  }

  #ledger(evicting: Row[]): BoxLedger<Row> {
    const live = (row: Row) => !row.evicting;
    return {
      hasEvent: (id) => this.#events.has(id) && live(this.#events.get(id)!),
      hasCard: (key) => this.#cards.has(key),
      isContact: (recipient, sender) => this.#allow.get(recipient)?.has(sender) ?? false,
      pair: (recipient, sender) => totalsOf(this.#pairs.get(recipient)?.get(sender)),
      sender: (sender) => totalsOf(this.#senders.get(sender)),
      recipient: (recipient) => totalsOf(this.#queues.get(recipient)),
      box: () => totalsOf(this.#box),
      weakestStranger: (recipient, maxStrength) => {
        let best: Row | undefined;
        for (const row of this.#queues.get(recipient)?.rows.values() ?? []) {
          if (!live(row) || row.lane !== 'stranger' || row.strength > maxStrength) continue;
          // Rows come in seq order, so a strictly weaker one is needed to replace the best.
          if (best === undefined || row.strength < best.strength) best = row;
        }
        return best;
      },
      largestOtherSender: (recipient, exclude) => largest(this.#pairs.get(recipient), exclude)?.sender,
      oldestOfPair: (recipient, sender) => {
        for (const row of this.#senders.get(sender)?.rows ?? [])
          if (live(row) && row.recipient === recipient) return row;
        return undefined;
      },
      largestOtherSenderInBox: (exclude) => largest(this.#senders, exclude),
      oldestOfSender: (sender) => {
        for (const row of this.#senders.get(sender)?.rows ?? []) if (live(row)) return row;
        return undefined;
      },
      remove: (row) => {
        row.evicting = true;
        this.#count(row, -1);
        evicting.push(row);
      },
      insert: (record, lane) => this.#insert(record, lane),
    };
  }

  #insert(record: BoxEventRecord, lane: Lane): number {
    let queue = this.#queues.get(record.recipient);
    if (queue === undefined) {
      // Kept after it empties: its nextSeq is what keeps seqs from being reused.
      queue = { nextSeq: 1, count: 0, bytes: 0, rows: new Map() };
      this.#queues.set(record.recipient, queue);
    }
    const row: Row = {
      ...record,
      seq: queue.nextSeq++,
      lane,
      order: this.#order++,
      evicting: false,
      storedAt: Date.now(),
    };
    let sender = this.#senders.get(row.sender);
    if (sender === undefined) {
      sender = { count: 0, bytes: 0, rows: new Set() };
      this.#senders.set(row.sender, sender);
    }
    let pairs = this.#pairs.get(row.recipient);
    if (pairs === undefined) {
      pairs = new Map();
      this.#pairs.set(row.recipient, pairs);
    }
    if (!pairs.has(row.sender)) pairs.set(row.sender, { count: 0, bytes: 0 });
    this.#events.set(row.id, row);
    queue.rows.set(row.seq, row);
    sender.rows.add(row);
    this.#count(row, 1);
    return row.seq;
  }
}

function totalsOf(counter: Counter | undefined): Totals {
  return counter === undefined ? EMPTY_TOTALS : { count: counter.count, bytes: counter.bytes };
}

/** The entry with the most bytes other than `exclude`, lowest key among equals. */
function largest(
  entries: Map<string, Counter> | undefined,
  exclude: string,
): { sender: string; bytes: number } | undefined {
  let best: { sender: string; bytes: number } | undefined;
  for (const [sender, { bytes }] of entries ?? []) {
    if (sender === exclude || bytes <= 0) continue;
    if (best === undefined || bytes > best.bytes || (bytes === best.bytes && sender < best.sender)) {
      best = { sender, bytes };
    }
  }
  return best;
}
