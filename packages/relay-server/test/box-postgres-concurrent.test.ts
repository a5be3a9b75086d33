import type { OhanEvent } from '@wmp/ohan-seal';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxLimits, PublishResult } from '../src/index.js';
import type { PostgresBoxStore } from '../src/storage/postgres/postgres-box-store.js';
import { event, type Party, party } from '../src/storage/testing/events.js';
import type { Harness } from '../src/storage/testing/harness.js';
import { PostgresBoxes } from './fixtures/postgres-box.js';

// Two PostgresBoxStore instances on one database, as two relay nodes: both publish to one
// recipient near its cap at once (contacts and strangers, so both kinds of eviction run), to a
// few others near the box cap, and deliver some events meanwhile. The running totals must stay
// equal to a recount by SQL at every moment a third connection looks (each look one statement,
// one snapshot) and at the end, no cap may ever be exceeded, and seqs must be handed out once each.

const LIMITS: Partial<BoxLimits> = {
  directory: false,
  strangerBits: 4,
  lanes: { contact: 500, stranger: 3 },
  // About 12 small events for the recipient, 30 in the box.
  recipientBytes: 12_000,
  senderBytes: 9_000,
  boxBytes: 30_000,
};
const SENDERS = 12;
const PER_SENDER = 16;

/** One statement: every total against a recount of the events, and every cap. */
const CHECK = `
WITH e AS (SELECT recipient, sender, size FROM ohan_events),
  rc AS (SELECT recipient, count(*) AS c, sum(size) AS b FROM e GROUP BY recipient),
  sc AS (SELECT sender, count(*) AS c, sum(size) AS b FROM e GROUP BY sender),
  pc AS (SELECT recipient, sender, count(*) AS c, sum(size) AS b FROM e GROUP BY recipient, sender)
SELECT
  (SELECT count(*) FROM rc FULL JOIN ohan_recipients r USING (recipient)
     WHERE coalesce(rc.c, 0) <> coalesce(r.count, -1) OR coalesce(rc.b, 0) <> coalesce(r.bytes, -1))::int AS bad_recipients,
  (SELECT count(*) FROM sc FULL JOIN ohan_senders s USING (sender)
     WHERE sc.c IS DISTINCT FROM s.count OR sc.b IS DISTINCT FROM s.bytes)::int AS bad_senders,
  (SELECT count(*) FROM pc FULL JOIN ohan_pairs p USING (recipient, sender)
     WHERE pc.c IS DISTINCT FROM p.count OR pc.b IS DISTINCT FROM p.bytes)::int AS bad_pairs,
  ((SELECT count(*) FROM e) <> b.count OR (SELECT coalesce(sum(size), 0) FROM e) <> b.bytes) AS bad_box,
  (SELECT coalesce(max(b), 0) FROM rc)::float8 AS max_recipient_bytes,
  (SELECT coalesce(max(b), 0) FROM sc)::float8 AS max_sender_bytes,
  (SELECT coalesce(sum(size), 0) FROM e)::float8 AS box_bytes,
  (SELECT count(*) FROM ohan_events WHERE lane = 1 GROUP BY recipient, sender ORDER BY 1 DESC LIMIT 1)::int AS max_stranger_pair,
  (SELECT count(*) FROM (SELECT recipient, seq FROM ohan_events GROUP BY 1, 2 HAVING count(*) > 1) d)::int AS duplicate_seqs
FROM ohan_box_totals b WHERE b.id = 1`;

interface Check {
  bad_recipients: number;
  bad_senders: number;
  bad_pairs: number;
  bad_box: boolean;
  max_recipient_bytes: number;
  max_sender_bytes: number;
  box_bytes: number;
  max_stranger_pair: number | null;
  duplicate_seqs: number;
}

const boxes = new PostgresBoxes('box_concurrent');
let schema: string;
let nodes: Harness<PostgresBoxStore>[];
let observer: pg.Pool;
let bob: Party;
let others: Party[];
let senders: Party[];
let toBob: OhanEvent[];
let toOthers: OhanEvent[];

beforeAll(async () => {
  schema = await boxes.schema();
  nodes = [await boxes.on(schema, LIMITS), await boxes.on(schema, LIMITS)];
  observer = await boxes.pool(schema, 1);
  bob = party();
  others = [party(), party(), party()];
  senders = Array.from({ length: SENDERS }, () => party());
  // Half the senders are Bob's contacts (no stamp); the others strangers of strength 4..7.
  await nodes[0]!.store.putAllow(
    bob.key,
    senders.slice(0, SENDERS / 2).map((s) => s.key),
  );
  toBob = [];
  toOthers = [];
  for (let i = 0; i < PER_SENDER; i++) {
    for (const [k, s] of senders.entries()) {
      const contact = k < SENDERS / 2;
      toBob.push(await event(s, bob, contact ? { bodyBytes: (i % 3) * 300 } : { bits: 4 + ((i + k) % 4) }));
      if (i % 4 === 0) toOthers.push(await event(s, others[(i + k) % others.length]!, { bits: 4 }));
    }
  }
});

afterAll(async () => {
  for (const node of nodes ?? []) await node.close();
  await observer?.end();
});

describe('two PostgreSQL boxes on one database', () => {
  it('publishing to one recipient at its cap at once: totals stay exact, no cap is exceeded, seqs are unique', async () => {
    const checks: Check[] = [];
    let running = true;
    const watch = (async () => {
      while (running) checks.push((await observer.query<Check>(CHECK)).rows[0]!);
    })();

    // Each node takes every other event, 24 publishes in flight per node (so both batch, and
    // their transactions interleave), and delivers some of Bob's events as it goes.
    const answers: PublishResult[][] = [[], []];
    const delivered = [0, 0];
    let deliveries = 0;
    // Mostly to Bob, with one to another recipient every fifth publish: Bob stays at his cap and the box near its own.
    const work = toBob.flatMap((e, i) => (i % 4 === 3 && toOthers[i >> 2] ? [e, toOthers[i >> 2]!] : [e]));
    expect(work.length).toBe(toBob.length + toOthers.length);
    const publishing = nodes.flatMap((node, n) => {
      const mine = work.filter((_, i) => i % 2 === n);
      let next = 0;
      return Array.from({ length: 24 }, async () => {
        while (next < mine.length) {
          const i = next++;
          answers[n]!.push(await node.store.publish(mine[i]!));
          if (i % 20 === 19) {
            const page = await node.store.fetch(bob.key, 0, 3);
            deliveries++;
            delivered[n]! += await node.store.delivered(
              bob.key,
              page.events.map((x) => x.id),
            );
          }
        }
      });
    });
    const settled = await Promise.allSettled(publishing);
    running = false;
    await watch;
    expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
    checks.push((await observer.query<Check>(CHECK)).rows[0]!);

    // The observer looked many times while both wrote, and never saw a total off or a cap passed.
    expect(checks.length).toBeGreaterThan(10);
    for (const c of checks) {
      expect(c).toMatchObject({ bad_recipients: 0, bad_senders: 0, bad_pairs: 0, bad_box: false, duplicate_seqs: 0 });
      expect(c.max_recipient_bytes).toBeLessThanOrEqual(LIMITS.recipientBytes!);
      expect(c.max_sender_bytes).toBeLessThanOrEqual(LIMITS.senderBytes!);
      expect(c.box_bytes).toBeLessThanOrEqual(LIMITS.boxBytes!);
      expect(c.max_stranger_pair ?? 0).toBeLessThanOrEqual(3);
    }

    const all = answers.flat();
    const stored = all.filter((a) => a.status === 'stored');
    const evicted = stored.reduce((n, a) => n + a.evicted, 0);
    // Both nodes stored, evicted and were refused: the caps were reached, from both sides.
    for (const mine of answers) {
      expect(mine.filter((a) => a.status === 'stored').length).toBeGreaterThan(10);
      expect(mine.filter((a) => a.status === 'stored' && a.evicted > 0).length).toBeGreaterThan(0);
      expect(mine.filter((a) => a.status === 'refused').length).toBeGreaterThan(0);
    }
    expect(all.filter((a) => a.status === 'exists')).toEqual([]);
    // Deliveries ran among the publishes (what they removed depends on the race with evictions).
    expect(deliveries).toBeGreaterThan(4);

    // What is left is exactly what was stored less what was evicted and delivered.
    const removed = delivered[0]! + delivered[1]!;
    expect((await nodes[1]!.store.totals()).count).toBe(stored.length - evicted - removed);
    let left = 0;
    for (const r of [bob, ...others]) {
      const ids = (await nodes[0]!.store.fetch(r.key, 0, 500)).events.map((e) => e.id);
      expect(await nodes[1]!.store.delivered(r.key, ids)).toBe(ids.length);
      left += ids.length;
    }
    expect(left).toBeGreaterThan(10);
    expect(await nodes[0]!.store.totals()).toEqual({ count: 0, bytes: 0 });

    // Each recipient's seqs were handed out once each, with no gap: 1..n over both nodes, and the
    // recipient row's next seq is n + 1 (refused publishes took none).
    const toBobIds = new Set(toBob.map((e) => e.id));
    const bobSeqs = stored
      .filter((a) => a.status === 'stored' && toBobIds.has(a.id))
      .map((a) => (a.status === 'stored' ? a.seq : 0))
      .sort((a, b) => a - b);
    expect(bobSeqs).toEqual(Array.from({ length: bobSeqs.length }, (_, i) => i + 1));
    const { rows } = await observer.query<{ next: number }>(
      'SELECT next_seq::float8 AS next FROM ohan_recipients WHERE recipient = $1',
      [bob.key],
    );
    expect(rows[0]!.next).toBe(bobSeqs.length + 1);

    // Both nodes wrote in batches of more than one publish.
    for (const node of nodes) {
      const stats = node.store.writeStats;
      expect(stats.failures).toBe(0);
      expect(stats.operations).toBeGreaterThan(stats.transactions);
    }
  }, 60_000);
});
