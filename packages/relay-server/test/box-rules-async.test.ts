import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AsyncBoxLedger,
  admitEvent,
  admitEventAsync,
  type BoxEventRecord,
  type BoxLedger,
  checkBoxLimits,
  type Lane,
  type Totals,
} from '../src/index.js';
import { BOX_LEDGER_MEMBERS } from '../src/storage/contracts/box-rules.js';

// `admitEventAsync` runs `admitEvent` itself over an asynchronous ledger by replaying it. Over the
// same state it must answer what `admitEvent` answers, leave the same state, and ask the ledger
// each question exactly once (a replay never asks again, never removes or inserts twice), whether
// the ledger answers with promises, with values, or with a mix.

interface Row extends BoxEventRecord {
  readonly lane: Lane;
  readonly order: number;
}

/** A plain array box: each member scans. */
class ArrayLedger implements BoxLedger<Row> {
  rows: Row[] = [];
  readonly contacts = new Set<string>();
  readonly calls = new Map<string, number>();
  #order = 0;
  #seq = new Map<string, number>();

  #count(member: string): void {
    this.calls.set(member, (this.calls.get(member) ?? 0) + 1);
  }
  #totals(rows: readonly Row[]): Totals {
    return { count: rows.length, bytes: rows.reduce((n, r) => n + r.size, 0) };
  }
  hasEvent(id: string): boolean {
    this.#count('hasEvent');
    return this.rows.some((r) => r.id === id);
  }
  hasCard(): boolean {
    this.#count('hasCard');
    return true;
  }
  isContact(recipient: string, sender: string): boolean {
    this.#count('isContact');
    return this.contacts.has(`${recipient}>${sender}`);
  }
  pair(recipient: string, sender: string): Totals {
    this.#count('pair');
    return this.#totals(this.rows.filter((r) => r.recipient === recipient && r.sender === sender));
  }
  sender(sender: string): Totals {
    this.#count('sender');
    return this.#totals(this.rows.filter((r) => r.sender === sender));
  }
  recipient(recipient: string): Totals {
    this.#count('recipient');
    return this.#totals(this.rows.filter((r) => r.recipient === recipient));
  }
  box(): Totals {
    this.#count('box');
    return this.#totals(this.rows);
  }
  weakestStranger(recipient: string, maxStrength: number): Row | undefined {
    this.#count('weakestStranger');
    let best: Row | undefined;
    for (const r of this.rows) {
      if (r.recipient !== recipient || r.lane !== 'stranger' || r.strength > maxStrength) continue;
      if (best === undefined || r.strength < best.strength) best = r;
    }
    return best;
  }
  #largest(rows: readonly Row[], exclude: string): { sender: string; bytes: number } | undefined {
    const bytes = new Map<string, number>();
    for (const r of rows) if (r.sender !== exclude) bytes.set(r.sender, (bytes.get(r.sender) ?? 0) + r.size);
    let best: { sender: string; bytes: number } | undefined;
    for (const [sender, b] of bytes) {
      if (best === undefined || b > best.bytes || (b === best.bytes && sender < best.sender))
        best = { sender, bytes: b };
    }
    return best;
  }
  largestOtherSender(recipient: string, exclude: string): string | undefined {
    this.#count('largestOtherSender');
    return this.#largest(
      this.rows.filter((r) => r.recipient === recipient),
      exclude,
    )?.sender;
  }
  oldestOfPair(recipient: string, sender: string): Row | undefined {
    this.#count('oldestOfPair');
    return this.rows.find((r) => r.recipient === recipient && r.sender === sender);
  }
  largestOtherSenderInBox(exclude: string): { sender: string; bytes: number } | undefined {
    this.#count('largestOtherSenderInBox');
    return this.#largest(this.rows, exclude);
  }
  oldestOfSender(sender: string): Row | undefined {
    this.#count('oldestOfSender');
    return this.rows.find((r) => r.sender === sender);
  }
  remove(row: Row): void {
    this.#count('remove');
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => r.id !== row.id);
    if (this.rows.length !== before - 1) throw new Error('removed twice');
  }
  insert(event: BoxEventRecord, lane: Lane): number {
    this.#count('insert');
    if (this.rows.some((r) => r.id === event.id)) throw new Error('inserted twice');
    this.rows.push({ ...event, lane, order: this.#order++ });
    const seq = (this.#seq.get(event.recipient) ?? 0) + 1;
    this.#seq.set(event.recipient, seq);
    return seq;
  }
}

/** `ledger` as an async ledger: member `i` of the run answers with a promise when `promised(i)`. */
function asynchronous(ledger: ArrayLedger, promised: (i: number) => boolean): AsyncBoxLedger<Row> {
  let i = 0;
  const face: Record<string, (a: unknown, b: unknown) => unknown> = {};
  for (const member of BOX_LEDGER_MEMBERS) {
    face[member] = (a, b) => {
      const value = (ledger as unknown as Record<string, (a: unknown, b: unknown) => unknown>)[member]!.call(
        ledger,
        a,
        b,
      );
      // A promise settled on a later turn, as a database answer would be.
      return promised(i++) ? new Promise((resolve) => setImmediate(() => resolve(value))) : value;
    };
  }
  return face as unknown as AsyncBoxLedger<Row>;
}

const LIMITS = checkBoxLimits({
  directory: false,
  strangerBits: 4,
  lanes: { contact: 4, stranger: 2 },
  senderBytes: 5000,
  recipientBytes: 3000,
  boxBytes: 7000,
});
const KEYS = ['a', 'b', 'c', 'd'];

const record = fc.record({
  id: fc.integer({ min: 0, max: 40 }).map((n) => `e${n}`),
  recipient: fc.constantFrom(...KEYS),
  sender: fc.constantFrom(...KEYS),
  strength: fc.integer({ min: 0, max: 8 }),
  size: fc.constantFrom(600, 900, 1300),
});

describe('admitEventAsync', () => {
  it('answers and changes what admitEvent does, asking each question once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...KEYS)), { maxLength: 6 }),
        fc.func(fc.boolean()),
        async (inputs, contacts, promised) => {
          const sync = new ArrayLedger();
          const async = new ArrayLedger();
          for (const [r, s] of contacts) for (const l of [sync, async]) l.contacts.add(`${r}>${s}`);
          const ledger = asynchronous(async, (i) => promised(i));
          for (const input of inputs) {
            const event: BoxEventRecord = { ...input, expiresAt: 0, json: '' };
            const expected = admitEvent(sync, event, LIMITS);
            expect(await admitEventAsync(ledger, event, LIMITS)).toEqual(expected);
            expect(async.rows).toEqual(sync.rows);
          }
          expect(Object.fromEntries(async.calls)).toEqual(Object.fromEntries(sync.calls));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects with the error of a rejected answer, and asks nothing more', async () => {
    const ledger = new ArrayLedger();
    const failing = asynchronous(ledger, () => true);
    const boom = new Error('connection lost');
    (failing as unknown as Record<string, unknown>).isContact = () => Promise.reject(boom);
    const event: BoxEventRecord = {
      id: 'x',
      recipient: 'a',
      sender: 'b',
      strength: 4,
      size: 600,
      expiresAt: 0,
      json: '',
    };
    await expect(admitEventAsync(failing, event, LIMITS)).rejects.toBe(boom);
    expect(Object.fromEntries(ledger.calls)).toEqual({ hasEvent: 1 });
    expect(ledger.rows).toEqual([]);
  });
});
