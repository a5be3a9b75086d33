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

/**
 * `BoxLedger` over an asynchronous driver (PostgreSQL), for `admitEventAsync`: each member answers
 * the same question as a value or a promise of it (return the value itself when it is at hand: it
 * saves a replay).
 */
export type AsyncBoxLedger<R> = {
  [K in keyof BoxLedger<R>]: (
    ...args: Parameters<BoxLedger<R>[K]>
  ) => ReturnType<BoxLedger<R>[K]> | PromiseLike<ReturnType<BoxLedger<R>[K]>>;
};

type Refusal = Extract<PublishResult, { status: 'refused' }>['code'];

function refused(code: Refusal): PublishResult {
  return { status: 'refused', code };
}

/**
 * The lanes and caps of docs/ohan-profile.md as one function, shared by every adapter so they
 * cannot disagree: the only copy of the rules (`laneWithoutEviction` and `admitEventAsync` run this
 * very function). "Oldest" is arrival order (the order events were stored), never the sender-chosen
 * `ts`, which a sender could set to dodge eviction. Order of checks: idempotency, directory, stamp,
 * per-pair count, per-sender bytes, then room for the recipient, then room in the box.
 *
 * It must stay a pure function of the ledger's answers, asking in an order that depends only on
 * them, and must never catch: `admitEventAsync` replays it.
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
  while (ledger.recipient(recipient).bytes + size > limits.recipientBytes) {
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

/**
 * `admitEvent` over totals alone, for an event taken to be new (the caller's insert finds out if
 * it is not): it answers that no event could make room, and records the lane instead of storing.
 * So `admitEvent` stores only when no eviction was needed, and refuses otherwise.
 */
class WithoutEviction implements BoxLedger<never> {
  view: BoxTotalsView | undefined;
  lane: Lane | undefined;
  hasEvent(): boolean {
    return false;
  }
  hasCard(key: string): boolean {
    return this.view!.hasCard(key);
  }
  isContact(recipient: string, sender: string): boolean {
    return this.view!.isContact(recipient, sender);
  }
  pair(recipient: string, sender: string): Totals {
    return this.view!.pair(recipient, sender);
  }
  sender(sender: string): Totals {
    return this.view!.sender(sender);
  }
  recipient(recipient: string): Totals {
    return this.view!.recipient(recipient);
  }
  box(): Totals {
    return this.view!.box();
  }
  weakestStranger(): undefined {
    return undefined;
  }
  largestOtherSender(): undefined {
    return undefined;
  }
  oldestOfPair(): undefined {
    return undefined;
  }
  largestOtherSenderInBox(): undefined {
    return undefined;
  }
  oldestOfSender(): undefined {
    return undefined;
  }
  remove(): void {
    throw new Error('nothing to remove: every search found no event');
  }
  insert(_event: BoxEventRecord, lane: Lane): number {
    this.lane = lane;
    return 0;
  }
}

/** Reused: `laneWithoutEviction` is synchronous and never re-entered. */
const withoutEviction = new WithoutEviction();

/**
 * The common case of `admitEvent`, decided from totals alone: the lane the event takes when
 * `admitEvent` would store it with no eviction (given that its id is new), else undefined and the
 * caller runs `admitEvent` over its own ledger. It never decides a refusal, so it cannot disagree
 * with it; and it is `admitEvent` itself, run over totals (`WithoutEviction`), not a second copy.
 */
export function laneWithoutEviction(view: BoxTotalsView, event: BoxEventRecord, limits: BoxLimits): Lane | undefined {
  const probe = withoutEviction;
  probe.view = view;
  probe.lane = undefined;
  try {
    return admitEvent(probe, event, limits).status === 'stored' ? probe.lane : undefined;
  } finally {
    probe.view = undefined;
  }
}

/** Every member of `BoxLedger`: the replay forwards exactly these (checked against the type). */
export const BOX_LEDGER_MEMBERS = [
  'hasEvent',
  'hasCard',
  'isContact',
  'pair',
  'sender',
  'recipient',
  'box',
  'weakestStranger',
  'largestOtherSender',
  'oldestOfPair',
  'largestOtherSenderInBox',
  'oldestOfSender',
  'remove',
  'insert',
] as const satisfies readonly (keyof BoxLedger<unknown>)[];
// Fails to compile when BoxLedger gains a member the list above lacks.
const _allMembers: Exclude<keyof BoxLedger<unknown>, (typeof BOX_LEDGER_MEMBERS)[number]> extends never ? true : never =
  true;

/** Thrown through `admitEvent` when the async ledger answered with a promise: await it, then replay. */
class AwaitAnswer {
  constructor(readonly answer: PromiseLike<unknown>) {}
}

/**
 * A synchronous face of an async ledger for one run of `admitEvent`: the first `answers.length`
 * calls are answered from the record (so nothing is asked, or removed, twice), the next one from
 * the ledger: kept when it is a value, thrown as `AwaitAnswer` when it is a promise.
 */
function replaying<R>(ledger: AsyncBoxLedger<R>, calls: string[], answers: unknown[]): BoxLedger<R> {
  let next = 0;
  const face: Record<string, (a?: unknown, b?: unknown) => unknown> = {};
  for (const member of BOX_LEDGER_MEMBERS) {
    face[member] = (a, b) => {
      const i = next++;
      if (i < answers.length) {
        // A replay must ask what the first run asked, or the record answers the wrong question.
        if (calls[i] !== member) throw new Error(`box rules replay diverged: ${member} instead of ${calls[i]}`);
        return answers[i];
      }
      const answer = (ledger[member] as (a?: unknown, b?: unknown) => unknown)(a, b);
      calls.push(member);
      if (isThenable(answer)) throw new AwaitAnswer(answer);
      answers.push(answer);
      return answer;
    };
  }
  return face as unknown as BoxLedger<R>;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

/**
 * `admitEvent` over an asynchronous ledger (PostgreSQL): the same function, so the same rules and
 * the same answers. It runs until the ledger answers with a promise, awaits it, and runs again
 * from the start with every answer so far recorded, so each question reaches the ledger once and
 * each `remove` and `insert` happens once. A ledger that answers the totals checks from rows it
 * already read (and locked) makes the common publish two runs: up to the insert, then through it.
 */
export async function admitEventAsync<R>(
  ledger: AsyncBoxLedger<R>,
  event: BoxEventRecord,
  limits: BoxLimits,
): Promise<PublishResult> {
  const calls: string[] = [];
  const answers: unknown[] = [];
  for (;;) {
    try {
      return admitEvent(replaying(ledger, calls, answers), event, limits);
    } catch (error) {
      if (!(error instanceof AwaitAnswer)) throw error;
      answers.push(await error.answer);
    }
  }
}
