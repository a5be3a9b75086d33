import type { OhanEvent } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { StoreInputError } from '../../index.js';
import { type BoxSuite, HOUR, ids, SMALL, seqOf } from './box-suite-context.js';
import { event, party, sizeOf } from './events.js';

/** Publish, fetch, delivered, expiry and allow lists of the `BoxStore` suite. */
export function boxPublishTests(s: BoxSuite): void {
  const { open, alice, bob, carol, all, stored, expectTotals } = s;
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
      await expect(box.putAllow(bob.key, [party().key, party().key, party().key, party().key])).rejects.toBeInstanceOf(
        StoreInputError,
      );
      expect(await box.getAllow(bob.key)).toEqual([alice.key]);
      await box.putAllow(bob.key, []);
      expect(await box.getAllow(bob.key)).toEqual([]);
    });
  });
}
