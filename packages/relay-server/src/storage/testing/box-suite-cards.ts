import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { createCard } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { type BoxSuite, SMALL } from './box-suite-context.js';
import { event, type Party } from './events.js';

/** Cards and the directory in the `BoxStore` suite. */
export function boxCardTests(s: BoxSuite): void {
  const { open, alice, bob, carol } = s;
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

    it('holds anything of a key: a card, events to or from it, or an allow list', async () => {
      const box = await open({ directory: true });
      const now = Date.now();
      for (const who of [alice, bob, carol]) expect(await box.holdsAny(who.key, now)).toBe(false);
      await box.putAllow(carol.key, [alice.key]);
      // An allow list is held (not `knows`: a card stamp is not skipped for it).
      expect(await box.holdsAny(carol.key, now)).toBe(true);
      expect(await box.knows(carol.key, now)).toBe(false);
      expect(await box.holdsAny(alice.key, now)).toBe(false); // on someone's list is not holding
      await box.putAllow(carol.key, []);
      expect(await box.holdsAny(carol.key, now)).toBe(false);
      await box.putCard(await card(bob, now), now);
      expect(await box.holdsAny(bob.key, now)).toBe(true);
      expect(await box.holdsAny(bob.key, now + 1_000 * box.limits.cardTtlSeconds + 1)).toBe(false);
      await box.putCard(await card(alice, now), now);
      const e = await event(alice, bob, SMALL);
      expect((await box.publish(e)).status).toBe('stored');
      expect(await box.holdsAny(alice.key, now + 1_000 * box.limits.cardTtlSeconds + 1)).toBe(true); // its event
      await box.delivered(bob.key, [e.id]);
      expect(await box.holdsAny(alice.key, now + 1_000 * box.limits.cardTtlSeconds + 1)).toBe(false);
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
}
