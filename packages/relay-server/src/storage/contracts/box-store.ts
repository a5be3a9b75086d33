import type { OhanCard, OhanEvent, StoredEvent } from '@wmp/ohan-seal';
import type { Totals } from './totals.js';

/**
 * Lane of a stored event (docs/ohan-profile.md, "The box API"), fixed when it is admitted:
 * `contact` when `from_key` was on the recipient's allow list, else `stranger`. Internal to the
 * box: no answer names a lane.
 */
export type Lane = 'contact' | 'stranger';

/** Why a publish was refused: the OHAN error codes (docs/ohan-profile.md) a store can decide. */
export type PublishRefusal = 'not_registered' | 'stamp_required' | 'sender_limit' | 'recipient_full' | 'box_full';

export type PublishResult =
  /** Stored now (answer 202); `evicted` events made room for it. */
  | { readonly status: 'stored'; readonly id: string; readonly seq: number; readonly evicted: number }
  /** This id is already in the box (answer 200): nothing changed. */
  | { readonly status: 'exists'; readonly id: string }
  /** Refused: nothing changed, not even an eviction. */
  | { readonly status: 'refused'; readonly code: PublishRefusal };

export interface FetchPage {
  /** `{...event, seq}` in seq order, as the box serves them. */
  readonly events: readonly StoredEvent[];
  /** The cursor to fetch on from: the last seq returned, or `after` when none was. */
  readonly next: number;
  /** True when unexpired events remain after `next`. */
  readonly more: boolean;
}

/** A page as stored text: each event's JSON as the box keeps it, for answering without re-encoding. */
export interface FetchPageText {
  readonly items: readonly { readonly seq: number; readonly json: string }[];
  readonly next: number;
  readonly more: boolean;
}

export type CardResult =
  /** First card for this key. */
  | 'stored'
  /** Replaced an older card (strictly older `ts`). */
  | 'replaced'
  /** Kept the stored card: it is as new or newer (the same `ts` refreshes its expiry). */
  | 'stale'
  /** A new key, and the directory holds `maxCards` cards: nothing stored. */
  | 'full';

/** The box's limits and caps (docs/ohan-profile.md); `GET /ohan/v1/limits` reports them. */
export interface BoxLimits {
  /** Directory box: a publish needs registered cards for both `to` and `from_key`. */
  readonly directory: boolean;
  /** Stamp strength a stranger event needs. */
  readonly strangerBits: number;
  /** Undelivered events per (sender, recipient), by the lane the next event would take. */
  readonly lanes: { readonly contact: number; readonly stranger: number };
  /** Undelivered bytes per sender key across all recipients. */
  readonly senderBytes: number;
  /** Undelivered bytes per recipient key. */
  readonly recipientBytes: number;
  /** Undelivered bytes in the whole box. */
  readonly boxBytes: number;
  /** Most contacts on one allow list. */
  readonly maxContacts: number;
  /** Most cards in the directory (docs/architecture.md, "Bounds"). */
  readonly maxCards: number;
  /**
   * Stamp bits the card of a key the box does not know needs: an operator's opt-in (default 0, no
   * stamp), since a card of the OHAN card format carries none.
   */
  readonly cardStampBits: number;
  /** A card not posted again (refreshed) for this long expires. */
  readonly cardTtlSeconds: number;
}

export const DEFAULT_BOX_LIMITS: BoxLimits = Object.freeze({
  directory: true,
  strangerBits: 18,
  lanes: Object.freeze({ contact: 500, stranger: 3 }),
  senderBytes: 8 * 1024 * 1024,
  recipientBytes: 32 * 1024 * 1024,
  boxBytes: 1024 * 1024 * 1024,
  maxContacts: 10_000,
  maxCards: 100_000,
  cardStampBits: 0,
  cardTtlSeconds: 90 * 24 * 3600,
});

/**
 * The OHAN box's storage (docs/ohan-profile.md): sealed events per recipient key, allow lists and
 * cards. Events must have passed `verifyEvent` (its "Validation") first: the store decides lanes,
 * caps and evictions, never validity. Every rule is checked and applied in the same transaction as
 * the insert, with running totals, so each check is O(1) and a refused publish changes nothing.
 *
 * What is stored: the event JSON, its recipient, sender, lane, stamp strength, expiry and size;
 * cards; allow lists. Never: client addresses, request nonces, plaintext.
 */
export interface BoxStore {
  /**
   * Admits a verified event by the lane and cap rules; resolves once the outcome is committed. `json`,
   * when the caller has it, must be exactly `JSON.stringify(event)` (the box API passes the body it
   * parsed): it is stored as it is instead of serializing the event again.
   */
  publish(event: OhanEvent, json?: string): Promise<PublishResult>;
  /**
   * Up to `limit` events of `recipient` with seq > `after`, in seq order; nothing is removed.
   * With `now`, events expired at `now` are skipped.
   */
  fetch(recipient: string, after: number, limit: number, now?: number): Promise<FetchPage>;
  /** `fetch`, with each event as its stored JSON text (what a box serves, byte for byte). */
  fetchText(recipient: string, after: number, limit: number, now?: number): Promise<FetchPageText>;
  /** Removes the named events (<= 500 ids) from this recipient's queue only; returns how many. */
  delivered(recipient: string, ids: readonly string[]): Promise<number>;
  /** Replaces the recipient's allow list (duplicates dropped, order kept). */
  putAllow(recipient: string, contacts: readonly string[]): Promise<void>;
  getAllow(recipient: string): Promise<string[]>;
  /**
   * Stores a verified card until `now + cardTtlSeconds`; a strictly newer `ts` replaces the stored
   * one, the same `ts` refreshes its expiry. A new key beyond `maxCards` is refused (`full`).
   */
  putCard(card: OhanCard, now: number): Promise<CardResult>;
  /** The unexpired card of `key`. */
  getCard(key: string, now: number): Promise<OhanCard | undefined>;
  /**
   * Whether the box knows `key` (an unexpired card, or undelivered events to or from it): a card
   * from a key it does not know must carry a stamp of the stranger strength.
   */
  knows(key: string, now: number): Promise<boolean>;
  /**
   * Whether the box holds anything of `key`'s: what `knows` says, or an allow list of it. A signed
   * request of a key it holds nothing of changes nothing when replayed (there is nothing to read,
   * remove or stream back), so the box need not remember its nonce.
   */
  holdsAny(key: string, now: number): Promise<boolean>;
  /** Removes at most `batch` expired cards; returns how many. */
  sweepExpiredCards(now: number, batch: number): Promise<number>;
  /** Cards in the directory, O(1). */
  cardCount(): Promise<number>;
  /** Removes at most `batch` events with `exp <= now`, earliest first; returns how many. */
  sweepExpired(now: number, batch: number): Promise<number>;
  /** Undelivered events and bytes addressed to `recipient`, O(1). */
  recipientStats(recipient: string): Promise<Totals>;
  /** Undelivered events and bytes published by `sender` across recipients, O(1). */
  senderStats(sender: string): Promise<Totals>;
  /** Undelivered events and bytes in the whole box, O(1). */
  totals(): Promise<Totals>;
  /** The limits in force. */
  readonly limits: BoxLimits;
}
