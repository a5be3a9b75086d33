import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { createCard, type OhanEvent } from '@wmp/ohan-seal';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type BoxLimits,
  type BoxStore,
  DEFAULT_BOX_LIMITS,
  type PublishResult,
  StoreClosedError,
  StoreInputError,
} from '../../index.js';
import { event, type Party, party, sizeOf } from './events.js';
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
const TEST_LIMITS: Partial<BoxLimits> = { directory: false, strangerBits: 4 };
const SMALL = { bits: 4 };
const BIG = { bits: 4, bodyBytes: 300 };
/** A small event of exactly 933 bytes, for ties. */
const EXACT = { bits: 4, size: 933 };
const HOUR = 3600_000;

function seqOf(result: PublishResult): number {
  if (result.status !== 'stored') throw new Error(`expected stored, got ${JSON.stringify(result)}`);
  return result.seq;
}

const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

/**
 * The adapter suite of `BoxStore` (DESIGN §4.6-4.7): every adapter runs exactly this, so memory
 * and SQLite cannot drift apart. `factory` opens a fresh, empty box with the given limits.
 */
export function boxStoreSuite(name: string, factory: BoxFactory, durable = false): void {
  describe(`BoxStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<BoxLimits> = {}) => (await harnesses.open({ ...TEST_LIMITS, ...limits })).store;

    let alice: Party;
    let bob: Party;
    let carol: Party;
    beforeAll(() => {
      [alice, bob, carol] = [party(), party(), party()];
    });

    /** Everything in `recipient`'s queue, as `fetch` serves it. */
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

    describe('publish and fetch', () => {
      it('serves each event back exactly, with a per-recipient seq from 1, in order', async () => {
        const box = await open();
        await box.putAllow(bob.key, [alice.key]);
        const sent = [await event(alice, bob), await event(alice, bob), await event(alice, bob)];
        const toCarol = await event(alice, carol, SMALL);
        expect((await box.publish(sent[0]!)).status).toBe('stored');
        expect(seqOf(await box.publish(toCarol))).toBe(1);
        expect(seqOf(await box.publish(sent[1]!))).toBe(2);
        expect(seqOf(await box.publish(sent[2]!))).toBe(3);
        expect(await all(box, bob)).toEqual(sent.map((e, i) => ({ ...e, seq: i + 1 })));
        expect(await all(box, carol)).toEqual([{ ...toCarol, seq: 1 }]);
      });

      it('pages by cursor with next and more, removing nothing', async () => {
        const box = await open();
        await box.putAllow(bob.key, [alice.key]);
        const sent: OhanEvent[] = [];
        for (let i = 0; i < 5; i++) sent.push(await event(alice, bob));
        for (const e of sent) await box.publish(e);
        const p1 = await box.fetch(bob.key, 0, 2);
        expect([ids(p1.events), p1.next, p1.more]).toEqual([ids(sent.slice(0, 2)), 2, true]);
        const p2 = await box.fetch(bob.key, p1.next, 2);
        expect([ids(p2.events), p2.next, p2.more]).toEqual([ids(sent.slice(2, 4)), 4, true]);
        const p3 = await box.fetch(bob.key, p2.next, 2);
        expect([ids(p3.events), p3.next, p3.more]).toEqual([ids(sent.slice(4)), 5, false]);
        const p4 = await box.fetch(bob.key, p3.next, 2);
        expect([p4.events, p4.next, p4.more]).toEqual([[], 5, false]);
        expect(await stored(box, bob)).toEqual(ids(sent));
        expect(await box.fetch(carol.key, 0, 10)).toEqual({ events: [], next: 0, more: false });
      });

      it('serves the same page as stored text: each event exactly as published, with its seq', async () => {
        const box = await open();
        await box.putAllow(bob.key, [alice.key]);
        const sent: OhanEvent[] = [];
        for (let i = 0; i < 3; i++) sent.push(await event(alice, bob));
        for (const e of sent) await box.publish(e);
        const text = await box.fetchText(bob.key, 1, 10);
        expect([text.next, text.more]).toEqual([3, false]);
        expect(text.items.map((i) => ({ ...JSON.parse(i.json), seq: i.seq }))).toEqual(
          (await box.fetch(bob.key, 1, 10)).events,
        );
        expect(text.items.map((i) => JSON.parse(i.json))).toEqual(sent.slice(1));
        const page = await box.fetchText(bob.key, 0, 2);
        expect([page.items.length, page.next, page.more]).toEqual([2, 2, true]);
      });

      it('is idempotent on the id: the same event again is "exists", stored once', async () => {
        const box = await open({ lanes: { contact: 1, stranger: 1 } });
        const e = await event(alice, bob, SMALL);
        expect(await box.publish(e)).toEqual({ status: 'stored', id: e.id, seq: 1, evicted: 0 });
        // Even now that the pair is at its limit, a retry is answered as a success.
        expect(await box.publish(e)).toEqual({ status: 'exists', id: e.id });
        expect(await box.publish({ ...e, seq: 7 } as OhanEvent)).toEqual({ status: 'exists', id: e.id });
        expect(await box.totals()).toEqual({ count: 1, bytes: sizeOf(e) });
      });

      it('refuses bad arguments with StoreInputError', async () => {
        const box = await open();
        await expect(box.fetch(bob.key, -1, 10)).rejects.toBeInstanceOf(StoreInputError);
        await expect(box.fetch(bob.key, 0, 0)).rejects.toBeInstanceOf(StoreInputError);
        await expect(box.delivered(bob.key, Array(501).fill('x'))).rejects.toBeInstanceOf(StoreInputError);
        await expect(box.sweepExpired(Date.now(), 0)).rejects.toBeInstanceOf(StoreInputError);
        expect((await box.fetch(bob.key, 0, 10_000)).events).toEqual([]);
      });
    });

    describe('delivered', () => {
      it("removes only the caller's events and returns how many", async () => {
        const box = await open();
        const toBob = [await event(alice, bob, SMALL), await event(alice, bob, SMALL)];
        const toCarol = await event(alice, carol, SMALL);
        for (const e of [...toBob, toCarol]) await box.publish(e);
        // Bob names Carol's event: nothing of Carol's goes.
        expect(await box.delivered(bob.key, [toCarol.id, 'f'.repeat(64)])).toBe(0);
        expect(await stored(box, carol)).toEqual([toCarol.id]);
        expect(await box.delivered(bob.key, [toBob[0]!.id, toBob[0]!.id, toCarol.id])).toBe(1);
        expect(await stored(box, bob)).toEqual([toBob[1]!.id]);
        expect(await box.delivered(bob.key, [])).toBe(0);
        await expectTotals(box, [bob, carol], [alice]);
      });

      it('never reuses a seq, even after the queue emptied', async () => {
        const box = await open();
        const first = [await event(alice, bob, SMALL), await event(alice, bob, SMALL)];
        for (const e of first) await box.publish(e);
        expect(await box.delivered(bob.key, ids(first))).toBe(2);
        expect(await box.recipientStats(bob.key)).toEqual({ count: 0, bytes: 0 });
        expect(seqOf(await box.publish(await event(alice, bob, SMALL)))).toBe(3);
        expect((await box.fetch(bob.key, 2, 10)).events.map((e) => e.seq)).toEqual([3]);
      });

      it('accepts up to 500 ids in one call', async () => {
        const box = await open();
        const e = await event(alice, bob, SMALL);
        await box.publish(e);
        expect(await box.delivered(bob.key, [...Array(499).fill('0'.repeat(64)), e.id])).toBe(1);
      });
    });

    describe('lanes (§4.7)', () => {
      it('a stranger needs stamp strength >= stranger_bits; a contact needs none', async () => {
        const box = await open();
        expect(await box.publish(await event(alice, bob))).toEqual({ status: 'refused', code: 'stamp_required' });
        expect(await box.publish(await event(alice, bob, { bits: 3 }))).toEqual({
          status: 'refused',
          code: 'stamp_required',
        });
        expect((await box.publish(await event(alice, bob, { bits: 4 }))).status).toBe('stored');
        await box.putAllow(bob.key, [alice.key]);
        expect((await box.publish(await event(alice, bob))).status).toBe('stored');
        expect(await box.recipientStats(bob.key)).toMatchObject({ count: 2 });
      });

      it('at most 3 undelivered stranger events per (sender, recipient)', async () => {
        const box = await open();
        const sent: OhanEvent[] = [];
        for (let i = 0; i < 3; i++) sent.push(await event(alice, bob, SMALL));
        for (const e of sent) expect((await box.publish(e)).status).toBe('stored');
        expect(await box.publish(await event(alice, bob, SMALL))).toEqual({ status: 'refused', code: 'sender_limit' });
        // Other pairs are not affected.
        expect((await box.publish(await event(carol, bob, SMALL))).status).toBe('stored');
        expect((await box.publish(await event(alice, carol, SMALL))).status).toBe('stored');
        // Delivering one makes room for one.
        await box.delivered(bob.key, [sent[0]!.id]);
        expect((await box.publish(await event(alice, bob, SMALL))).status).toBe('stored');
        expect(await box.publish(await event(alice, bob, SMALL))).toEqual({ status: 'refused', code: 'sender_limit' });
      });

      it('at most 500 undelivered contact events per (sender, recipient)', async () => {
        const box = await open();
        await box.putAllow(bob.key, [alice.key]);
        const sent = await Promise.all(Array.from({ length: 501 }, () => event(alice, bob)));
        const results = await Promise.all(sent.slice(0, 500).map((e) => box.publish(e)));
        expect(results.every((r) => r.status === 'stored')).toBe(true);
        expect(await box.publish(sent[500]!)).toEqual({ status: 'refused', code: 'sender_limit' });
        expect(await box.recipientStats(bob.key)).toMatchObject({ count: 500 });
      });

      it('the limit is that of the lane the next event takes: a removed contact is a stranger again', async () => {
        const box = await open();
        await box.putAllow(bob.key, [alice.key]);
        for (let i = 0; i < 4; i++) await box.publish(await event(alice, bob));
        await box.putAllow(bob.key, []);
        expect(await box.publish(await event(alice, bob, SMALL))).toEqual({ status: 'refused', code: 'sender_limit' });
      });

      it('caps the undelivered bytes of a sender key across recipients (sender_limit)', async () => {
        // 3000 bytes per sender: three small events (3 x 933 = 2799), not four.
        const box = await open({ senderBytes: 3000 });
        const dave = party();
        for (const r of [bob, carol, dave])
          expect((await box.publish(await event(alice, r, SMALL))).status).toBe('stored');
        expect(await box.publish(await event(alice, party(), SMALL))).toEqual({
          status: 'refused',
          code: 'sender_limit',
        });
        expect(await box.senderStats(alice.key)).toMatchObject({ count: 3 });
        // Another sender is not affected.
        expect((await box.publish(await event(carol, bob, SMALL))).status).toBe('stored');
      });
    });

    describe('recipient full, incoming stranger (§4.7)', () => {
      it('evicts weaker-or-equal older strangers, weakest then oldest; never stronger ones', async () => {
        // 3000 bytes per recipient: three small events.
        const box = await open({ recipientBytes: 3000 });
        const [s1, s2, s3, s4, s5, s6, s7] = Array.from({ length: 7 }, () => party()) as Party[];
        const x6 = await event(s1!, bob, { bits: 6 });
        const y5 = await event(s2!, bob, { bits: 5 });
        const z6 = await event(s3!, bob, { bits: 6 });
        for (const e of [x6, y5, z6]) await box.publish(e);

        // Strength 5 arrives: Y (5, equal and older) is the only candidate.
        const w5 = await event(s4!, bob, { bits: 5 });
        expect(await box.publish(w5)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([x6, z6, w5]));

        // Strength 4: everything stored is stronger.
        expect(await box.publish(await event(s5!, bob, { bits: 4 }))).toEqual({
          status: 'refused',
          code: 'recipient_full',
        });
        expect(await stored(box, bob)).toEqual(ids([x6, z6, w5]));

        // Strength 6: the weakest (W, 5) goes first, though it is the newest.
        const u6 = await event(s6!, bob, { bits: 6 });
        expect(await box.publish(u6)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([x6, z6, u6]));

        // Strength 7: all are 6; the oldest (X) goes.
        const t7 = await event(s7!, bob, { bits: 7 });
        expect(await box.publish(t7)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([z6, u6, t7]));

        // A big event (1273) needs two small ones gone: 2799 - 933 + 1273 = 3139 > 3000.
        const big = await event(party(), bob, { bits: 8, bodyBytes: 300 });
        expect(await box.publish(big)).toMatchObject({ status: 'stored', evicted: 2 });
        expect(await stored(box, bob)).toEqual(ids([t7, big]));
        await expectTotals(box, [bob], [s1!, s2!, s3!, s4!, s6!, s7!]);
      });

      it('refuses with recipient_full and evicts nothing when evicting all candidates would not make room', async () => {
        const box = await open({ recipientBytes: 3000 });
        await box.putAllow(bob.key, [alice.key]);
        const c1 = await event(alice, bob, SMALL);
        const c2 = await event(alice, bob, SMALL);
        const weak = await event(carol, bob, { bits: 4 });
        for (const e of [c1, c2, weak]) await box.publish(e);
        // Evicting the only stranger leaves 1866 + 1273 = 3139 > 3000: refuse, and keep it.
        expect(await box.publish(await event(party(), bob, { bits: 8, bodyBytes: 300 }))).toEqual({
          status: 'refused',
          code: 'recipient_full',
        });
        expect(await stored(box, bob)).toEqual(ids([c1, c2, weak]));
        await expectTotals(box, [bob], [alice, carol]);
      });
    });

    describe('recipient full, incoming contact (§4.7)', () => {
      it('evicts strangers first, weakest then oldest', async () => {
        // 4000 bytes: four small events.
        const box = await open({ recipientBytes: 4000 });
        const [p, q, r] = [party(), party(), party()];
        await box.putAllow(bob.key, [p.key, q.key, r.key]);
        const s7 = await event(alice, bob, { bits: 7 });
        const q1 = await event(q, bob, EXACT);
        const s5 = await event(carol, bob, { bits: 5 });
        const r1 = await event(r, bob, EXACT);
        for (const e of [s7, q1, s5, r1]) await box.publish(e);

        const p1 = await event(p, bob, SMALL);
        expect(await box.publish(p1)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([s7, q1, r1, p1]));
        const p2 = await event(p, bob, SMALL);
        expect(await box.publish(p2)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([q1, r1, p1, p2]));

        // No strangers left; Q and R hold 933 bytes each: the tie goes to the lower key.
        const p3 = await event(p, bob, SMALL);
        expect(await box.publish(p3)).toMatchObject({ status: 'stored', evicted: 1 });
        const kept = q.key < r.key ? r1 : q1;
        expect(await stored(box, bob)).toEqual(ids([kept, p1, p2, p3]));
      });

      it("then the oldest event of the other sender holding the most bytes; only the publisher's own left: recipient_full", async () => {
        const box = await open({ recipientBytes: 4000 });
        const [p, q, r] = [party(), party(), party()];
        await box.putAllow(bob.key, [p.key, q.key, r.key]);
        const r1 = await event(r, bob, SMALL);
        const q1 = await event(q, bob, BIG);
        const r2 = await event(r, bob, SMALL);
        for (const e of [r1, q1, r2]) await box.publish(e);
        // Q holds 1273, R 1866 (933 x 2); 3139 + 933 > 4000: R's oldest (R1) goes.
        const p1 = await event(p, bob, SMALL);
        expect(await box.publish(p1)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([q1, r2, p1]));
        // Now Q holds 1273, R 933: Q1 goes.
        const p2 = await event(p, bob, SMALL);
        expect(await box.publish(p2)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([r2, p1, p2]));
        // 2799 + 933 = 3732 fits.
        const p3 = await event(p, bob, SMALL);
        expect(await box.publish(p3)).toMatchObject({ status: 'stored', evicted: 0 });
        // Full again: R2, the last other sender's event, goes.
        const p4 = await event(p, bob, SMALL);
        expect(await box.publish(p4)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, bob)).toEqual(ids([p1, p2, p3, p4]));
        // Only the publisher's own events remain.
        expect(await box.publish(await event(p, bob, SMALL))).toEqual({ status: 'refused', code: 'recipient_full' });
        expect(await stored(box, bob)).toEqual(ids([p1, p2, p3, p4]));
        await expectTotals(box, [bob], [p, q, r]);
      });
    });

    describe('box full (§4.7)', () => {
      it('evicts the oldest events of the sender holding the most bytes in the box; the publisher itself: box_full', async () => {
        // 4900 bytes in the whole box (four events fit, five do not); recipients have room.
        const box = await open({ boxBytes: 4900 });
        const [p, q, r] = [party(), party(), party()];
        const [b1, b2, b3] = [party(), party(), party()];
        for (const b of [b1, b2, b3]) await box.putAllow(b.key, [p.key, q.key, r.key]);
        const q1 = await event(q, b1, SMALL);
        const q2 = await event(q, b2, BIG);
        const r1 = await event(r, b3, SMALL);
        const p1 = await event(p, b1, SMALL);
        for (const e of [q1, q2, r1, p1]) await box.publish(e);
        expect(await box.totals()).toMatchObject({ count: 4 });

        // 4072 + 933 > 4900. Q holds 2206, the most: its oldest (Q1, to another recipient) goes.
        const p2 = await event(p, b2, SMALL);
        expect(await box.publish(p2)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, b1)).toEqual(ids([p1]));
        expect(await stored(box, b2)).toEqual(ids([q2, p2]));

        // P now holds 1866, more than Q (1273) and R (933): P's own publish gives way.
        expect(await box.publish(await event(p, b3, SMALL))).toEqual({ status: 'refused', code: 'box_full' });
        expect(await box.totals()).toMatchObject({ count: 4 });

        // R publishes: P is the largest other sender; P's oldest (P1) goes.
        const r2 = await event(r, b1, SMALL);
        expect(await box.publish(r2)).toMatchObject({ status: 'stored', evicted: 1 });
        expect(await stored(box, b1)).toEqual(ids([r2]));
        expect(await stored(box, b2)).toEqual(ids([q2, p2]));
        expect(await stored(box, b3)).toEqual(ids([r1]));
        await expectTotals(box, [b1, b2, b3], [p, q, r]);
      });

      it('a publisher holding as much as the largest other sender is refused (box_full)', async () => {
        const box = await open({ boxBytes: 2000 });
        const [b1, b2] = [party(), party()];
        await box.publish(await event(alice, b1, EXACT));
        await box.publish(await event(carol, b1, EXACT));
        // 1866 + 933 > 2000; Alice and Carol hold 933 each.
        expect(await box.publish(await event(alice, b2, SMALL))).toEqual({ status: 'refused', code: 'box_full' });
        expect(await box.totals()).toMatchObject({ count: 2 });
      });

      it('an empty box that cannot hold the event refuses it', async () => {
        const box = await open({ boxBytes: 500 });
        expect(await box.publish(await event(alice, bob, SMALL))).toEqual({ status: 'refused', code: 'box_full' });
        expect(await box.totals()).toEqual({ count: 0, bytes: 0 });
      });
    });

    describe('expiry', () => {
      it('sweeps expired events in bounded batches, earliest first, and keeps totals', async () => {
        const box = await open();
        const now = Date.now();
        const ts = new Date(now);
        const late = await event(alice, bob, { ...SMALL, ts, exp: new Date(now + 3 * HOUR) });
        const early = await event(alice, carol, { ...SMALL, ts, exp: new Date(now + HOUR) });
        const middle = await event(alice, bob, { ...SMALL, ts, exp: new Date(now + 2 * HOUR) });
        const keep = await event(carol, bob, { ...SMALL, ts, exp: new Date(now + 10 * HOUR) });
        for (const e of [late, early, middle, keep]) await box.publish(e);

        const at = now + 4 * HOUR;
        // Expired but not yet swept: a fetch with the clock skips them.
        expect(ids((await box.fetch(bob.key, 0, 10, at)).events)).toEqual([keep.id]);
        expect(await box.sweepExpired(at, 2)).toBe(2);
        expect(await stored(box, carol)).toEqual([]);
        expect(await stored(box, bob)).toEqual(ids([late, keep]));
        expect(await box.sweepExpired(at, 2)).toBe(1);
        expect(await box.sweepExpired(at, 2)).toBe(0);
        expect(await stored(box, bob)).toEqual([keep.id]);
        await expectTotals(box, [bob, carol], [alice, carol]);
      });

      it('an event is expired at its exp, not before', async () => {
        const box = await open();
        const now = Date.now();
        const e = await event(alice, bob, { ...SMALL, ts: new Date(now), exp: new Date(now + HOUR) });
        await box.publish(e);
        const exp = Date.parse(e.exp);
        expect(await box.sweepExpired(exp - 1, 10)).toBe(0);
        expect(await box.sweepExpired(exp, 10)).toBe(1);
      });
    });

    describe('allow lists', () => {
      it('replaces the whole list, drops duplicates, keeps order, per recipient', async () => {
        const box = await open({ maxContacts: 3 });
        expect(await box.getAllow(bob.key)).toEqual([]);
        await box.putAllow(bob.key, [carol.key, alice.key, carol.key]);
        expect(await box.getAllow(bob.key)).toEqual([carol.key, alice.key]);
        expect(await box.getAllow(carol.key)).toEqual([]);
        await box.putAllow(bob.key, [alice.key]);
        expect(await box.getAllow(bob.key)).toEqual([alice.key]);
        await expect(
          box.putAllow(bob.key, [party().key, party().key, party().key, party().key]),
        ).rejects.toBeInstanceOf(StoreInputError);
        expect(await box.getAllow(bob.key)).toEqual([alice.key]);
        await box.putAllow(bob.key, []);
        expect(await box.getAllow(bob.key)).toEqual([]);
      });
    });

    describe('cards and the directory', () => {
      const card = (p: Party, ts: number) =>
        createCard({ signer: p.signer, enc: p.enc.multikey, relays: ['https://box.example'], ts: rfc3339(ts) });

      it('stores cards by key; a strictly newer ts replaces the stored one', async () => {
        const box = await open();
        const t = Date.parse('2026-11-29T12:00:00Z');
        const now = Date.now();
        const first = await card(alice, t);
        expect(await box.putCard(first, now)).toBe('stored');
        expect(await box.getCard(alice.key, now)).toEqual(first);
        expect(await box.putCard(await card(alice, t - 1000), now)).toBe('stale');
        expect(await box.putCard(await card(alice, t), now)).toBe('stale');
        expect(await box.getCard(alice.key, now)).toEqual(first);
        const newer = await card(alice, t + 1000);
        expect(await box.putCard(newer, now)).toBe('replaced');
        expect(await box.getCard(alice.key, now)).toEqual(newer);
        expect(await box.getCard(bob.key, now)).toBeUndefined();
        expect(await box.cardCount()).toBe(1);
      });

      it('expires a card that is not posted again, refreshes one that is, and sweeps in batches', async () => {
        const box = await open({ cardTtlSeconds: 100 });
        const t0 = Date.now();
        const a = await card(alice, t0);
        await box.putCard(a, t0);
        await box.putCard(await card(bob, t0), t0);
        // Alice posts the same card again later: her expiry moves on, Bob's does not.
        expect(await box.putCard(a, t0 + 60_000)).toBe('stale');
        expect(await box.getCard(bob.key, t0 + 100_000)).toBeUndefined();
        expect(await box.getCard(alice.key, t0 + 100_000)).toEqual(a);
        expect(await box.knows(bob.key, t0 + 100_000)).toBe(false);
        expect(await box.knows(alice.key, t0 + 100_000)).toBe(true);
        expect(await box.sweepExpiredCards(t0 + 100_000, 10)).toBe(1);
        expect(await box.cardCount()).toBe(1);
        expect(await box.sweepExpiredCards(t0 + 160_000, 10)).toBe(1);
        expect(await box.cardCount()).toBe(0);
      });

      it('refuses a new key beyond maxCards, still takes a newer card of a stored key', async () => {
        const box = await open({ maxCards: 1 });
        const now = Date.now();
        expect(await box.putCard(await card(alice, now - 1000), now)).toBe('stored');
        expect(await box.putCard(await card(bob, now), now)).toBe('full');
        expect(await box.getCard(bob.key, now)).toBeUndefined();
        expect(await box.putCard(await card(alice, now), now)).toBe('replaced');
        expect(await box.cardCount()).toBe(1);
      });

      it('knows a key with undelivered events to or from it, and no other', async () => {
        const box = await open({ directory: false });
        const now = Date.now();
        expect(await box.knows(alice.key, now)).toBe(false);
        await box.putAllow(bob.key, [alice.key]);
        const e = await event(alice, bob, SMALL);
        expect((await box.publish(e)).status).toBe('stored');
        expect(await box.knows(alice.key, now)).toBe(true);
        expect(await box.knows(bob.key, now)).toBe(true);
        expect(await box.knows(carol.key, now)).toBe(false);
        await box.delivered(bob.key, [e.id]);
        expect(await box.knows(alice.key, now)).toBe(false);
      });

      it('a directory box needs cards for both to and from_key (not_registered)', async () => {
        const box = await open({ directory: true });
        const e = await event(alice, bob, SMALL);
        const notRegistered = { status: 'refused', code: 'not_registered' };
        expect(await box.publish(e)).toEqual(notRegistered);
        await box.putCard(await card(bob, Date.now()), Date.now());
        expect(await box.publish(e)).toEqual(notRegistered);
        await box.putCard(await card(alice, Date.now()), Date.now());
        expect((await box.publish(e)).status).toBe('stored');
        expect(box.limits.directory).toBe(true);
      });
    });

    it('reports the limits in force, with the OHAN defaults', async () => {
      const box = await open({ boxBytes: 12345 });
      expect(box.limits).toEqual({
        ...DEFAULT_BOX_LIMITS,
        ...TEST_LIMITS,
        cardStampBits: TEST_LIMITS.strangerBits,
        boxBytes: 12345,
      });
      expect(DEFAULT_BOX_LIMITS).toMatchObject({
        directory: true,
        strangerBits: 18,
        lanes: { contact: 500, stranger: 3 },
        senderBytes: 8 * 1024 * 1024,
        recipientBytes: 32 * 1024 * 1024,
      });
    });

    it('refuses every call once closed', async () => {
      const h = await harnesses.open(TEST_LIMITS);
      const e = await event(alice, bob, SMALL);
      await h.close();
      await expect(h.store.publish(e)).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.fetch(bob.key, 0, 1)).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.totals()).rejects.toBeInstanceOf(StoreClosedError);
    });

    // Only durable adapters reopen: the memory run has no such test at all.
    if (durable)
      it('survives close and reopen: events, seqs, totals, allow lists, cards', async () => {
        const h = await harnesses.open(TEST_LIMITS);
        if (!h.reopen) throw new Error('a durable adapter must reopen');
        const box = h.store;
        await box.putAllow(bob.key, [alice.key]);
        const c = await createCard({ signer: carol.signer, enc: carol.enc.multikey, relays: ['https://box.example'] });
        await box.putCard(c, Date.now());
        const sent = await Promise.all(Array.from({ length: 20 }, () => event(alice, bob)));
        const toCarol = await event(alice, carol, SMALL);
        await Promise.all([...sent, toCarol].map((e) => box.publish(e)));
        // The newest event goes: its seq must still not be handed out again.
        await box.delivered(bob.key, [sent[0]!.id, sent[19]!.id]);
        const before = { bob: await all(box, bob), carol: await all(box, carol), totals: await box.totals() };

        const again = (await harnesses.reopen(h)).store;
        expect(await all(again, bob)).toEqual(before.bob);
        expect(await all(again, carol)).toEqual(before.carol);
        expect(await again.totals()).toEqual(before.totals);
        expect(await again.getAllow(bob.key)).toEqual([alice.key]);
        expect(await again.getCard(carol.key, Date.now())).toEqual(c);
        expect(await again.cardCount()).toBe(1);
        expect(seqOf(await again.publish(await event(alice, bob)))).toBe(21);
        await expectTotals(again, [bob, carol], [alice]);
      });
  });
}
