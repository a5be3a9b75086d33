import type { OhanEvent } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { BIG, type BoxSuite, EXACT, ids, SMALL } from './box-suite-context.js';
import { event, type Party, party } from './events.js';

/** The admission rules (docs/ohan-profile.md) of the `BoxStore` suite: lanes, a full recipient, a full box. */
export function boxAdmissionTests(s: BoxSuite): void {
  const { open, alice, bob, carol, stored, expectTotals } = s;
  describe('lanes', () => {
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

  describe('recipient full, incoming stranger', () => {
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

  describe('recipient full, incoming contact', () => {
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

  describe('box full', () => {
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
}
