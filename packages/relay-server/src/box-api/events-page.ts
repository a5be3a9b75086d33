import type { FetchPageText } from '../storage/contracts/box-store.js';

/**
 * The body of a `GET /events` answer: the stored JSON of each event as it is, with `seq` added (no
 * parse and re-encode per event). Pure, so the ohan-fetch benchmark's baseline builds the same text.
 */
export function eventsPageText(page: FetchPageText): string {
  const events = page.items.map((item) => `${item.json.slice(0, -1)},"seq":${item.seq}}`).join(',');
  return `{"events":[${events}],"next":${page.next},"more":${page.more}}`;
}
