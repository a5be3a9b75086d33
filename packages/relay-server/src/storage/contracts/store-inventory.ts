import type { SessionRecord } from '@wmp/session';
import { StoreInputError } from '../errors.js';
import { clampCount, MAX_PAGE } from './limits.js';

/**
 * One queue that holds messages, as an operator sees it: a recipient's offline queue, or a peer
 * relay's outbox (its key is `relay:<origin>`).
 */
export interface QueueOverview {
  /** The queue's key: the recipient, or `relay:<origin>` for an outbox. */
  readonly recipient: string;
  readonly count: number;
  readonly bytes: number;
  /**
   * When the oldest message still in it arrived (ms since the epoch), or undefined when that
   * message was queued by a version that did not record arrival times.
   */
  readonly oldestAt: number | undefined;
}

/** One recipient key's undelivered sealed events in the OHAN box (same shape: count, bytes, oldest arrival). */
export type BoxOverview = QueueOverview;

/** A page of an inventory, in key order (byte order of the keys, the same on every adapter). */
export interface InventoryPage<T> {
  readonly items: readonly T[];
  /** The key to read on from (the last one returned) when more may follow; undefined at the end. */
  readonly next: string | undefined;
}

/**
 * What an operator lists (`wmp-relay admin queues`, `admin sessions`): the queues and outboxes
 * with messages, the box's recipients with events, and the sessions, each paged by key. Reads
 * of committed state only, never a hot path (a page may scan rows kept for empty queues), and
 * nothing here writes: removing goes through the stores' own operations (`purgeQueue`,
 * `purgeBox`), so every running total stays exact.
 */
export interface StoreInventory {
  /** Queues (and outboxes) holding at least one message, with keys after `after`, at most `limit` (<= 500). */
  queues(after: string | undefined, limit: number): Promise<InventoryPage<QueueOverview>>;
  /** Box recipients holding at least one undelivered event, with keys after `after`, at most `limit` (<= 500). */
  boxes(after: string | undefined, limit: number): Promise<InventoryPage<BoxOverview>>;
  /** Sessions (any state, expired ones not yet swept included), with ids after `after`, at most `limit` (<= 500). */
  sessions(after: string | undefined, limit: number): Promise<InventoryPage<SessionRecord>>;
}

/** The checked arguments of an inventory read: `after` a string or absent, `limit` clamped to 1..500. */
export function inventoryArgs(after: string | undefined, limit: number): { after: string; limit: number } {
  if (after !== undefined && (typeof after !== 'string' || after.length > 4096)) {
    throw new StoreInputError('after must be a string of at most 4096 characters');
  }
  return { after: after ?? '', limit: clampCount(limit, MAX_PAGE, 'limit') };
}

/** A page from `limit + 1` rows read: the extra row only says that more follow. */
export function inventoryPage<T>(rows: readonly T[], limit: number, keyOf: (row: T) => string): InventoryPage<T> {
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? keyOf(items.at(-1)!) : undefined };
}

/** An arrival time as stored: 0 (a row of a version that did not record it) is unknown. */
export function arrivalOf(value: number | null | undefined): number | undefined {
  return value === null || value === undefined || value <= 0 ? undefined : value;
}

/** A queue's or a box recipient's line as the SQL stores read it (`oldest`: its first arrival). */
export interface OverviewRow {
  recipient: string;
  count: number;
  bytes: number;
  oldest: number | null;
}

/** The overview of an `OverviewRow`. */
export function overviewOf(row: OverviewRow): QueueOverview {
  return { recipient: row.recipient, count: row.count, bytes: row.bytes, oldestAt: arrivalOf(row.oldest) };
}

/**
 * Byte order of two keys' UTF-8, what SQLite's BINARY and PostgreSQL's "C" collations compare:
 * code point order (JavaScript's `<` compares UTF-16 units, which differs past U+FFFF).
 */
export function compareKeys(a: string, b: string): number {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
