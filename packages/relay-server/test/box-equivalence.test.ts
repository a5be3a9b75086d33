import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OhanEvent } from '@wmp/ohan-seal';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BoxLimits, type BoxStore, MemoryBoxStore } from '../src/index.js';
import { SqliteStore } from '../src/sqlite.js';
import { event, type Party, party, sizeOf } from '../src/storage/testing/events.js';

// Random publish / delivered / sweep / allow-list sequences against the memory box and the SQLite
// box side by side, with small caps so every lane and cap rule fires: both must answer the same and
// hold the same state after every step, and every running total must equal what is stored.
const HOUR = 3600_000;
const LIMITS: Partial<BoxLimits> = {
  directory: false,
  strangerBits: 4,
  lanes: { contact: 4, stranger: 2 },
  senderBytes: 5000,
  recipientBytes: 3500,
  boxBytes: 6000,
};

const dir = mkdtempSync(join(tmpdir(), 'wmp-box-equivalence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let senders: Party[];
let recipients: Party[];
let pool: OhanEvent[];
const now = Date.now();

beforeAll(async () => {
  senders = Array.from({ length: 4 }, () => party());
  recipients = Array.from({ length: 3 }, () => party());
  pool = [];
  // Every sender to every recipient, strengths 0 and 3..7, small and big, expiring over 1..6 hours.
  for (let i = 0; i < 72; i++) {
    const bits = [0, 3, 4, 5, 6, 7][i % 6]!;
    pool.push(
      await event(senders[i % 4]!, recipients[Math.floor(i / 4) % 3]!, {
        ...(bits === 0 ? {} : { bits }),
        bodyBytes: i % 5 === 0 ? 300 : 0,
        ts: new Date(now),
        exp: new Date(now + (1 + (i % 6)) * HOUR),
      }),
    );
  }
});

type Op =
  | { kind: 'publish'; event: number }
  | { kind: 'delivered'; recipient: number; events: number[] }
  | { kind: 'sweep'; hours: number; batch: number }
  | { kind: 'allow'; recipient: number; senders: number[] };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('publish' as const), event: fc.nat(71) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('delivered' as const),
      recipient: fc.nat(2),
      events: fc.array(fc.nat(71), { maxLength: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('sweep' as const),
      hours: fc.nat(7),
      batch: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('allow' as const),
      recipient: fc.nat(2),
      senders: fc.subarray([0, 1, 2, 3]),
    }),
  },
);

async function apply(box: BoxStore, o: Op): Promise<unknown> {
  switch (o.kind) {
    case 'publish':
      return box.publish(pool[o.event]!);
    case 'delivered':
      return box.delivered(
        recipients[o.recipient]!.key,
        o.events.map((i) => pool[i]!.id),
      );
    case 'sweep':
      return box.sweepExpired(now + o.hours * HOUR, o.batch);
    case 'allow':
      return box.putAllow(
        recipients[o.recipient]!.key,
        o.senders.map((i) => senders[i]!.key),
      );
  }
}

/** Everything observable, with the totals checked against the stored events. */
async function state(box: BoxStore) {
  const queues = [];
  let count = 0;
  let bytes = 0;
  const bySender = new Map<string, { count: number; bytes: number }>();
  for (const r of recipients) {
    const { events } = await box.fetch(r.key, 0, 500);
    const size = events.reduce((n, { seq: _seq, ...e }) => n + sizeOf(e as OhanEvent), 0);
    expect(await box.recipientStats(r.key)).toEqual({ count: events.length, bytes: size });
    for (const { seq: _seq, ...e } of events) {
      const t = bySender.get(e.from_key) ?? { count: 0, bytes: 0 };
      t.count++;
      t.bytes += sizeOf(e as OhanEvent);
      bySender.set(e.from_key, t);
    }
    count += events.length;
    bytes += size;
    queues.push(events.map((e) => [e.seq, e.id]));
  }
  expect(await box.totals()).toEqual({ count, bytes });
  for (const s of senders) expect(await box.senderStats(s.key)).toEqual(bySender.get(s.key) ?? { count: 0, bytes: 0 });
  return queues;
}

describe('memory and SQLite boxes are equivalent', () => {
  it('on random publish / delivered / sweep / allow sequences', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 50 }), async (ops) => {
        const memory = new MemoryBoxStore(LIMITS);
        const sqlite = SqliteStore.open({ path: join(dir, `box-${++run}.db`), box: LIMITS });
        try {
          for (const o of ops) {
            expect(await apply(sqlite.box, o)).toEqual(await apply(memory, o));
            expect(await state(sqlite.box)).toEqual(await state(memory));
          }
        } finally {
          await sqlite.close();
        }
      }),
      { numRuns: 30 },
    );
  });
});
