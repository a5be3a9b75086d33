import type { OhanEvent, StoredEvent } from '@wmp/ohan-seal';
import type { FetchPage, FetchPageText } from './box-store.js';

/** A stored event row as the SQL stores read it. */
export interface StoredEventRow {
  readonly seq: number;
  readonly body: string;
}

/**
 * A page of `limit` events from rows read with `limit + 1` (one more row than asked says there is
 * `more`); the cursor stays at `after` when the page is empty.
 */
export function textPageOf(rows: readonly StoredEventRow[], limit: number, after: number): FetchPageText {
  const items = rows.slice(0, limit).map((row) => ({ seq: row.seq, json: row.body }));
  return { items, next: items.at(-1)?.seq ?? after, more: rows.length > limit };
}

/** `BoxStore.fetch` from `fetchText`'s page: each stored JSON text parsed, with its `seq`. */
export function eventPageOf(page: FetchPageText): FetchPage {
  const events = page.items.map((i): StoredEvent => ({ ...(JSON.parse(i.json) as OhanEvent), seq: i.seq }));
  return { events, next: page.next, more: page.more };
}
