import type { BoxEventRecord } from './box-input.js';
import type { BoxLimits, Lane, PublishResult } from './box-store.js';
import type { Totals } from './totals.js';

/**
 * The box's view of its own state inside one publish transaction, for `admitEvent`. Reads see
 * every earlier `remove` of the same transaction. `R` is the adapter's handle of a stored event.
 * Adapters commit what `admitEvent` did when it returns `stored`, and undo every `remove` when it
 * returns `refused`.
 */
export interface BoxLedger<R> {
  hasEvent(id: string): boolean;
  hasCard(key: string): boolean;
  isContact(recipient: string, sender: string): boolean;
  pair(recipient: string, sender: string): Totals;
  sender(sender: string): Totals;
  recipient(recipient: string): Totals;
  box(): Totals;
  /** The recipient's stranger event with the lowest strength <= `maxStrength`, oldest first among equals. */
  weakestStranger(recipient: string, maxStrength: number): R | undefined;
  /** The sender other than `exclude` holding the most bytes for `recipient` (ties: lowest key). */
  largestOtherSender(recipient: string, exclude: string): string | undefined;
  /** The oldest event from `sender` to `recipient`. */
  oldestOfPair(recipient: string, sender: string): R | undefined;
  /** The sender other than `exclude` holding the most bytes in the box (ties: lowest key). */
  largestOtherSenderInBox(exclude: string): { readonly sender: string; readonly bytes: number } | undefined;
  /** The oldest event from `sender`, to any recipient. */
  oldestOfSender(sender: string): R | undefined;
  /** Removes an event and takes it out of every total. */
  remove(event: R): void;
  /** Stores the event in the given lane, adds it to every total; returns its seq. */
  insert(event: BoxEventRecord, lane: Lane): number;
}

function refused(code: Extract<PublishResult, { status: 'refused' }>['code']): PublishResult {
  return { status: 'refused', code };
}

/**
 * DESIGN §4.7 as one function, shared by every adapter so they cannot disagree. "Oldest" is
 * arrival order (the order events were stored), never the sender-chosen `ts`, which a sender
 * could set to dodge eviction. Order of checks: idempotency, directory, stamp, per-pair count,
 * per-sender bytes, then room for the recipient, then room in the box.
 */
export function admitEvent<R>(ledger: BoxLedger<R>, event: BoxEventRecord, limits: BoxLimits): PublishResult {
  const { id, recipient, sender, size, strength } = event;
  if (ledger.hasEvent(id)) return { status: 'exists', id };
  if (limits.directory && !(ledger.hasCard(recipient) && ledger.hasCard(sender))) return refused('not_registered');

  const lane: Lane = ledger.isContact(recipient, sender) ? 'contact' : 'stranger';
  if (lane === 'stranger' && strength < limits.strangerBits) return refused('stamp_required');
  // The count limit is that of the lane this event takes: a sender removed from the allow list
  // with many events stored cannot add more until they drop under the stranger limit.
  if (ledger.pair(recipient, sender).count >= limits.lanes[lane]) return refused('sender_limit');
  if (ledger.sender(sender).bytes + size > limits.senderBytes) return refused('sender_limit');

  let evicted = 0;
  const fitsRecipient = () => ledger.recipient(recipient).bytes + size <= limits.recipientBytes;
  while (!fitsRecipient()) {
    const victim = lane === 'stranger' ? ledger.weakestStranger(recipient, strength) : contactVictim(ledger, event);
    if (victim === undefined) return refused('recipient_full');
    ledger.remove(victim);
    evicted++;
  }

  while (ledger.box().bytes + size > limits.boxBytes) {
    const largest = ledger.largestOtherSenderInBox(sender);
    // The publisher is (one of) the largest holders: its own publish is what must give way.
    if (largest === undefined || ledger.sender(sender).bytes >= largest.bytes) return refused('box_full');
    ledger.remove(ledger.oldestOfSender(largest.sender) as R);
    evicted++;
  }

  const seq = ledger.insert(event, lane);
  return { status: 'stored', id, seq, evicted };
}

/** Recipient full, incoming contact event: strangers first (weakest, oldest), then the largest other sender's oldest. */
function contactVictim<R>(ledger: BoxLedger<R>, event: BoxEventRecord): R | undefined {
  const stranger = ledger.weakestStranger(event.recipient, Number.POSITIVE_INFINITY);
  if (stranger !== undefined) return stranger;
  const other = ledger.largestOtherSender(event.recipient, event.sender);
  return other === undefined ? undefined : ledger.oldestOfPair(event.recipient, other);
}
