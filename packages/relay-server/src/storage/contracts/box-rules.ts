import type { BoxEventRecord } from './box-input.js';
import type { BoxLimits, Lane, PublishResult } from './box-store.js';
import type { Totals } from './totals.js';

/**
 * What the admission checks read: cards, allow lists and running totals. Reads see every earlier
 * `remove` of the same transaction.
 */
export interface BoxTotalsView {
  hasCard(key: string): boolean;
  isContact(recipient: string, sender: string): boolean;
  pair(recipient: string, sender: string): Totals;
  sender(sender: string): Totals;
  recipient(recipient: string): Totals;
  box(): Totals;
}

/**
 * The box's view of its own state inside one publish transaction, for `admitEvent`. `R` is the
 * adapter's handle of a stored event. Adapters commit what `admitEvent` did when it returns
 * `stored`, and undo every `remove` when it returns `refused`.
 */
export interface BoxLedger<R> extends BoxTotalsView {
  hasEvent(id: string): boolean;
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

type Refusal = Extract<PublishResult, { status: 'refused' }>['code'];

function refused(code: Refusal): PublishResult {
  return { status: 'refused', code };
}

/**
 * The checks that need no eviction, in the order of `admitEvent` (after idempotency): directory,
 * stamp, per-pair count, per-sender bytes. Returns the lane the event takes, or the refusal.
 */
function laneOrRefusal(view: BoxTotalsView, event: BoxEventRecord, limits: BoxLimits): Lane | Refusal {
  const { recipient, sender, size, strength } = event;
  if (limits.directory && !(view.hasCard(recipient) && view.hasCard(sender))) return 'not_registered';
  const lane: Lane = view.isContact(recipient, sender) ? 'contact' : 'stranger';
  if (lane === 'stranger' && strength < limits.strangerBits) return 'stamp_required';
  // The count limit is that of the lane this event takes: a sender removed from the allow list
  // with many events stored cannot add more until they drop under the stranger limit.
  if (view.pair(recipient, sender).count >= limits.lanes[lane]) return 'sender_limit';
  if (view.sender(sender).bytes + size > limits.senderBytes) return 'sender_limit';
  return lane;
}

function isLane(value: Lane | Refusal): value is Lane {
  return value === 'contact' || value === 'stranger';
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
  const lane = laneOrRefusal(ledger, event, limits);
  if (!isLane(lane)) return refused(lane);

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

/**
 * The common case of `admitEvent`, decided from totals alone: the lane the event takes when
 * `admitEvent` would store it with no eviction (given that its id is new), else undefined and the
 * caller runs `admitEvent` itself. It never decides a refusal, so it cannot disagree with it.
 */
export function laneWithoutEviction(view: BoxTotalsView, event: BoxEventRecord, limits: BoxLimits): Lane | undefined {
  const lane = laneOrRefusal(view, event, limits);
  if (!isLane(lane)) return undefined;
  if (view.recipient(event.recipient).bytes + event.size > limits.recipientBytes) return undefined;
  if (view.box().bytes + event.size > limits.boxBytes) return undefined;
  return lane;
}

/** Recipient full, incoming contact event: strangers first (weakest, oldest), then the largest other sender's oldest. */
function contactVictim<R>(ledger: BoxLedger<R>, event: BoxEventRecord): R | undefined {
  const stranger = ledger.weakestStranger(event.recipient, Number.POSITIVE_INFINITY);
  if (stranger !== undefined) return stranger;
  const other = ledger.largestOtherSender(event.recipient, event.sender);
  return other === undefined ? undefined : ledger.oldestOfPair(event.recipient, other);
}
