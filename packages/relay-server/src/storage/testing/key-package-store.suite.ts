import { afterEach, describe, expect, it } from 'vitest';
import {
  type KeyPackageInput,
  type KeyPackageLimits,
  type KeyPackageStore,
  StoreClosedError,
  StoreInputError,
} from '../../index.js';
import { type Harness, Harnesses } from './harness.js';

export type KeyPackageFactory = (limits: Partial<KeyPackageLimits>) => Promise<Harness<KeyPackageStore>>;

const ALICE = 'did:key:z6MkAlice';
const BOB = 'did:key:z6MkBob';
const HOUR = 3600_000;

let n = 0;
/** A key package record as the relay stores it after verification (the store does not verify). */
function kp(overrides: Partial<KeyPackageInput> = {}): KeyPackageInput {
  n++;
  return {
    ref: `ref-${n}`,
    keyPackage: `AAEA${'k'.repeat(n % 7)}${n}`,
    cipherSuite: 1,
    expiresAt: Date.now() + HOUR,
    ...overrides,
  };
}

const opts = (maxPerIdentity = 100, now = Date.now()) => ({ now, maxPerIdentity });

/**
 * The adapter suite of `KeyPackageStore`: single use, oldest first, per-identity cap, store-wide
 * caps, expiry. Every adapter runs exactly this; `factory` opens a fresh, empty store.
 */
export function keyPackageStoreSuite(name: string, factory: KeyPackageFactory, durable = false): void {
  describe(`KeyPackageStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<KeyPackageLimits> = {}) => (await harnesses.open(limits)).store;

    it('hands each key package out once, oldest first, only for its identity', async () => {
      const store = await open();
      const [a1, a2, b1] = [kp(), kp(), kp()];
      expect(await store.publish(ALICE, [a1, a2], opts())).toBe(2);
      expect(await store.publish(BOB, [b1], opts())).toBe(1);
      expect(await store.count(ALICE, Date.now())).toBe(2);
      expect(await store.take(ALICE, undefined, Date.now())).toEqual({ identity: ALICE, ...a1 });
      expect(await store.take(ALICE, undefined, Date.now())).toEqual({ identity: ALICE, ...a2 });
      expect(await store.take(ALICE, undefined, Date.now())).toBeUndefined();
      expect(await store.take(BOB, undefined, Date.now())).toEqual({ identity: BOB, ...b1 });
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
    });

    it('takes by cipher suite when asked, and skips a ref already stored (a retry)', async () => {
      const store = await open();
      const [p1, p2] = [kp({ cipherSuite: 1 }), kp({ cipherSuite: 2 })];
      expect(await store.publish(ALICE, [p1, p2], opts())).toBe(2);
      expect(await store.publish(ALICE, [p1, { ...p2 }], opts())).toBe(0);
      expect(await store.publish(BOB, [p1], opts())).toBe(0); // refs are unique across identities
      expect((await store.take(ALICE, 2, Date.now()))?.ref).toBe(p2.ref);
      expect(await store.take(ALICE, 2, Date.now())).toBeUndefined();
      expect((await store.take(ALICE, 1, Date.now()))?.ref).toBe(p1.ref);
    });

    it('adds what fits under the per-identity cap and the store caps', async () => {
      const store = await open({ maxTotal: 5, maxBytes: 10_000 });
      expect(await store.publish(ALICE, [kp(), kp(), kp()], opts(2))).toBe(2);
      expect(await store.publish(ALICE, [kp()], opts(2))).toBe(0);
      expect(await store.count(ALICE, Date.now())).toBe(2);
      // Taking one makes room again.
      await store.take(ALICE, undefined, Date.now());
      expect(await store.publish(ALICE, [kp()], opts(2))).toBe(1);
      // The store-wide count cap (5) across identities.
      expect(await store.publish(BOB, [kp(), kp(), kp(), kp()], opts(10))).toBe(3);
      expect((await store.totals()).count).toBe(5);
      const small = await open({ maxBytes: 30 });
      expect(
        await small.publish(ALICE, [kp({ keyPackage: 'A'.repeat(20) }), kp({ keyPackage: 'B'.repeat(20) })], opts()),
      ).toBe(1);
      expect(await small.totals()).toEqual({ count: 1, bytes: 20 });
    });

    it('never hands out an expired key package; expired ones leave by sweep or by a new publish', async () => {
      const store = await open();
      const now = Date.now();
      const soon = kp({ expiresAt: now + 1000 });
      const later = kp({ expiresAt: now + HOUR });
      expect(await store.publish(ALICE, [soon, later, kp({ expiresAt: now - 1 })], opts(2, now))).toBe(2);
      // After `soon` expired: not counted, not handed out.
      expect(await store.count(ALICE, now + 2000)).toBe(1);
      expect((await store.take(ALICE, undefined, now + 2000))?.ref).toBe(later.ref);
      expect(await store.take(ALICE, undefined, now + 2000)).toBeUndefined();
      expect((await store.totals()).count).toBe(1); // still held until swept
      expect(await store.sweepExpired(now + 2000, 10)).toBe(1);
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
      // A publish drops the identity's expired ones, so they do not hold its cap.
      await store.publish(BOB, [kp({ expiresAt: now + 1000 }), kp({ expiresAt: now + 1000 })], opts(2, now));
      expect(await store.publish(BOB, [kp({ expiresAt: now + HOUR })], opts(2, now + 2000))).toBe(1);
      expect(await store.totals()).toMatchObject({ count: 1 });
    });

    it('sweeps in bounded batches', async () => {
      const store = await open();
      const now = Date.now();
      await store.publish(
        ALICE,
        Array.from({ length: 5 }, () => kp({ expiresAt: now + 10 })),
        opts(100, now),
      );
      expect(await store.sweepExpired(now + 20, 2)).toBe(2);
      expect(await store.sweepExpired(now + 20, 10)).toBe(3);
      expect(await store.sweepExpired(now + 20, 10)).toBe(0);
      await expect(store.sweepExpired(now, 0)).rejects.toBeInstanceOf(StoreInputError);
    });

    it('refuses input it should never get, and changes nothing', async () => {
      const store = await open();
      await expect(store.publish('', [kp()], opts())).rejects.toBeInstanceOf(StoreInputError);
      await expect(
        store.publish(
          ALICE,
          Array.from({ length: 101 }, () => kp()),
          opts(),
        ),
      ).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.publish(ALICE, [kp({ keyPackage: '' })], opts())).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.publish(ALICE, [kp({ cipherSuite: 1.5 })], opts())).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.publish(ALICE, [kp()], opts(0))).rejects.toBeInstanceOf(StoreInputError);
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
    });

    it('keeps one last-resort key package per identity: never taken, replaced by a newer one, swept when expired', async () => {
      const store = await open();
      const [r1, r2] = [kp(), kp({ cipherSuite: 2 })];
      expect(await store.lastResort(ALICE, undefined, Date.now())).toBeUndefined();
      expect(await store.putLastResort(ALICE, r1, Date.now())).toBe(true);
      for (let i = 0; i < 3; i++)
        expect(await store.lastResort(ALICE, undefined, Date.now())).toEqual({ identity: ALICE, ...r1 });
      // It is no regular key package: take and count do not see it; the totals count it.
      expect(await store.take(ALICE, undefined, Date.now())).toBeUndefined();
      expect(await store.count(ALICE, Date.now())).toBe(0);
      expect(await store.totals()).toEqual({ count: 1, bytes: r1.keyPackage.length });
      expect(await store.putLastResort(ALICE, r2, Date.now())).toBe(true);
      expect(await store.totals()).toEqual({ count: 1, bytes: r2.keyPackage.length });
      expect(await store.lastResort(ALICE, 1, Date.now())).toBeUndefined();
      expect(await store.lastResort(ALICE, 2, Date.now())).toEqual({ identity: ALICE, ...r2 });
      expect(await store.lastResort(BOB, undefined, Date.now())).toBeUndefined();
      const later = r2.expiresAt;
      expect(await store.lastResort(ALICE, undefined, later)).toBeUndefined();
      expect(await store.sweepExpired(later, 10)).toBe(1);
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
    });

    it('refuses a last-resort key package past the store caps', async () => {
      const store = await open({ maxTotal: 1 });
      expect(await store.publish(ALICE, [kp()], opts())).toBe(1);
      expect(await store.putLastResort(BOB, kp(), Date.now())).toBe(false);
      expect(await store.lastResort(BOB, undefined, Date.now())).toBeUndefined();
    });

    it('refuses every call once closed', async () => {
      const h = await harnesses.open({});
      await h.close();
      await expect(h.store.publish(ALICE, [kp()], opts())).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.take(ALICE, undefined, Date.now())).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.totals()).rejects.toBeInstanceOf(StoreClosedError);
    });

    if (durable) {
      it('keeps what it acknowledged across a reopen, and still hands each out once', async () => {
        const h = await harnesses.open({});
        const [a, b] = [kp(), kp()];
        expect(await h.store.publish(ALICE, [a, b], opts())).toBe(2);
        expect((await h.store.take(ALICE, undefined, Date.now()))?.ref).toBe(a.ref);
        const again = await harnesses.reopen(h);
        expect(await again.store.totals()).toEqual({ count: 1, bytes: b.keyPackage.length });
        expect(await again.store.take(ALICE, undefined, Date.now())).toEqual({ identity: ALICE, ...b });
        expect(await again.store.take(ALICE, undefined, Date.now())).toBeUndefined();
      });

      it('keeps the last-resort key package across a reopen', async () => {
        const h = await harnesses.open({});
        const r = kp();
        await h.store.putLastResort(ALICE, r, Date.now());
        const again = await harnesses.reopen(h);
        expect(await again.store.lastResort(ALICE, undefined, Date.now())).toEqual({ identity: ALICE, ...r });
      });
    }
  });
}
