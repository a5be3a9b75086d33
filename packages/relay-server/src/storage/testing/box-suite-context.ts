// What every part of the `BoxStore` adapter suite shares: the test limits, the event sizes, three
// parties and the checks of what a box holds.
import type { OhanEvent } from '@wmp/ohan-seal';
import { afterEach, expect } from 'vitest';
import type { BoxLimits, BoxStore, PublishResult } from '../../index.js';
import { type Party, party, sizeOf } from './events.js';
import { type Harness, Harnesses } from './harness.js';

export type BoxFactory = (limits: Partial<BoxLimits>) => Promise<Harness<BoxStore>>;

/**
 * The test box: relay-only (no cards needed unless a test turns the directory on) and a stranger
 * threshold of 4 bits, so stamps are mined in microseconds. Caps are set per test.
 *
 * Sizes, measured on the fixtures: a small stamped event is 932-933 bytes, a big one (bodyBytes
 * 300: one more 256-byte pad block) 1272-1273. So a cap of N * 1000 holds exactly N small events
 * (for N <= 13), and the numbers in the comments below are exact to a byte or two.
 */
export const TEST_LIMITS: Partial<BoxLimits> = { directory: false, strangerBits: 4 };
export const SMALL = { bits: 4 };
export const BIG = { bits: 4, bodyBytes: 300 };
/** A small event of exactly 933 bytes, for ties. */
export const EXACT = { bits: 4, size: 933 };
export const HOUR = 3600_000;

export function seqOf(result: PublishResult): number {
  if (result.status !== 'stored') throw new Error(`expected stored, got ${JSON.stringify(result)}`);
  return result.seq;
}

export const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

/** One adapter's run of the suite: its box opener, its parties and the checks. */
export interface BoxSuite {
  readonly harnesses: Harnesses<BoxStore, Partial<BoxLimits>>;
  /** A fresh, empty box with the test limits and `limits` over them. */
  open(limits?: Partial<BoxLimits>): Promise<BoxStore>;
  readonly alice: Party;
  readonly bob: Party;
  readonly carol: Party;
  /** Everything in `recipient`'s queue, as `fetch` serves it. */
  all(box: BoxStore, recipient: Party): Promise<Awaited<ReturnType<BoxStore['fetch']>>['events']>;
  /** The ids stored for `recipient`, in seq order. */
  stored(box: BoxStore, recipient: Party): Promise<string[]>;
  /** Totals must equal the sum of what is stored (each check is O(1): these are the running totals). */
  expectTotals(box: BoxStore, recipients: Party[], senders: Party[]): Promise<void>;
}

/** The suite's context; call inside its `describe` (it closes what each test opened). */
export function boxSuiteContext(factory: BoxFactory): BoxSuite {
  const harnesses = new Harnesses(factory);
  afterEach(() => harnesses.closeAll());
  const open = async (limits: Partial<BoxLimits> = {}) => (await harnesses.open({ ...TEST_LIMITS, ...limits })).store;
  async function all(box: BoxStore, recipient: Party) {
    return (await box.fetch(recipient.key, 0, 500)).events;
  }

  /** The ids stored for `recipient`, in seq order. */
  async function stored(box: BoxStore, recipient: Party) {
    return ids(await all(box, recipient));
  }

  /** Totals must equal the sum of what is stored (each check is O(1): these are the running totals). */
  async function expectTotals(box: BoxStore, recipients: Party[], senders: Party[]) {
    let count = 0;
    let bytes = 0;
    for (const r of recipients) {
      const events = await all(box, r);
      const size = events.reduce((n, { seq: _seq, ...e }) => n + sizeOf(e as OhanEvent), 0);
      expect(await box.recipientStats(r.key)).toEqual({ count: events.length, bytes: size });
      count += events.length;
      bytes += size;
    }
    expect(await box.totals()).toEqual({ count, bytes });
    for (const s of senders) {
      let n = 0;
      let b = 0;
      for (const r of recipients) {
        for (const { seq: _seq, ...e } of await all(box, r)) {
          if (e.from_key === s.key) {
            n++;
            b += sizeOf(e as OhanEvent);
          }
        }
      }
      expect(await box.senderStats(s.key)).toEqual({ count: n, bytes: b });
    }
  }
  return { harnesses, open, alice: party(), bob: party(), carol: party(), all, stored, expectTotals };
}
