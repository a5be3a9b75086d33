import { createCard } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOX_LIMITS, StoreClosedError } from '../../index.js';
import { boxAdmissionTests } from './box-suite-admission.js';
import { boxCardTests } from './box-suite-cards.js';
import { type BoxFactory, boxSuiteContext, SMALL, seqOf, TEST_LIMITS } from './box-suite-context.js';
import { boxPublishTests } from './box-suite-publish.js';
import { event } from './events.js';

export type { BoxFactory } from './box-suite-context.js';

/**
 * The adapter suite of `BoxStore` (docs/ohan-profile.md): every adapter runs exactly this, so
 * memory and SQLite cannot drift apart. `factory` opens a fresh, empty box with the given limits.
 */
export function boxStoreSuite(name: string, factory: BoxFactory, durable = false): void {
  describe(`BoxStore: ${name}`, () => {
    const s = boxSuiteContext(factory);
    const { harnesses, open, alice, bob, carol, all, expectTotals } = s;
    boxPublishTests(s);
    boxAdmissionTests(s);
    boxCardTests(s);

    it('reports the limits in force, with the OHAN defaults', async () => {
      const box = await open({ boxBytes: 12345 });
      expect(box.limits).toEqual({
        ...DEFAULT_BOX_LIMITS,
        ...TEST_LIMITS,
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
