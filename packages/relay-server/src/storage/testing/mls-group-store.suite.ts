import { afterEach, describe, expect, it } from 'vitest';
import { type MlsGroupInput, type MlsGroupStore, StoreClosedError, StoreInputError } from '../../index.js';
import { type Harness, Harnesses } from './harness.js';

export type MlsGroupFactory = (options: { maxGroups?: number }) => Promise<Harness<MlsGroupStore>>;

const HOUR = 3600_000;
let n = 0;
function group(overrides: Partial<MlsGroupInput> = {}): MlsGroupInput {
  n++;
  return {
    sessionId: `ses-g${n}`,
    groupId: `Z3JvdXA${n}`,
    cipherSuite: 1,
    epoch: 0,
    expiresAt: Date.now() + HOUR,
    ...overrides,
  };
}

/**
 * The adapter suite of `MlsGroupStore`: one group per session, compare-and-advance commit
 * ordering (exactly one of two commits for an epoch wins, a retry of the winner is recognised),
 * expiry. Every adapter runs exactly this.
 */
export function mlsGroupStoreSuite(name: string, factory: MlsGroupFactory, durable = false): void {
  describe(`MlsGroupStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (options: { maxGroups?: number } = {}) => (await harnesses.open(options)).store;

    it('records one group per session and keeps the first', async () => {
      const store = await open();
      const g = group({ epoch: 1 });
      expect(await store.create(g)).toEqual({ status: 'created', group: { ...g, lastCommit: undefined } });
      expect(await store.create({ ...g, groupId: 'b3RoZXI', epoch: 0 })).toEqual({
        status: 'exists',
        group: { ...g, lastCommit: undefined },
      });
      expect(await store.get(g.sessionId)).toEqual({ ...g, lastCommit: undefined });
      expect(await store.get('ses-none')).toBeUndefined();
      expect(await store.size()).toBe(1);
    });

    it('advances only from the current epoch: one winner per epoch, retries of it recognised', async () => {
      const store = await open();
      const g = group();
      await store.create(g);
      // Two commits made in epoch 0, submitted together: exactly one advances.
      const results = await Promise.all([store.advance(g.sessionId, 0, 'c-a'), store.advance(g.sessionId, 0, 'c-b')]);
      expect(results.map((r) => r.status).sort()).toEqual(['advanced', 'conflict']);
      const winner = results[0]!.status === 'advanced' ? 'c-a' : 'c-b';
      expect(results.find((r) => r.status === 'conflict')).toEqual({ status: 'conflict', epoch: 1 });
      expect(await store.get(g.sessionId)).toMatchObject({ epoch: 1, lastCommit: winner });
      // The winner again (a lost answer): recognised, nothing changes.
      expect(await store.advance(g.sessionId, 0, winner)).toEqual({ status: 'repeat', epoch: 1 });
      // A commit from a future or long-past epoch: conflict with the current epoch.
      expect(await store.advance(g.sessionId, 5, 'c-x')).toEqual({ status: 'conflict', epoch: 1 });
      expect(await store.advance(g.sessionId, 1, 'c-c')).toEqual({ status: 'advanced', epoch: 2 });
      // Once the group moved on, the old winner is no longer a retry.
      expect(await store.advance(g.sessionId, 0, winner)).toEqual({ status: 'conflict', epoch: 2 });
      expect(await store.advance('ses-none', 0, 'c')).toEqual({ status: 'missing' });
    });

    it('retracts an advance only while the group is still where that commit put it', async () => {
      const store = await open();
      const g = group();
      await store.create(g);
      expect(await store.advance(g.sessionId, 0, 'c-a')).toEqual({ status: 'advanced', epoch: 1 });
      // Another commit, or the right one from another epoch: nothing changes.
      expect(await store.retract(g.sessionId, 0, 'c-b')).toBe(false);
      expect(await store.retract(g.sessionId, 1, 'c-a')).toBe(false);
      expect(await store.retract('ses-none', 0, 'c-a')).toBe(false);
      expect(await store.get(g.sessionId)).toMatchObject({ epoch: 1, lastCommit: 'c-a' });
      // The commit nobody received: the group is back in epoch 0 and another commit may win it.
      expect(await store.retract(g.sessionId, 0, 'c-a')).toBe(true);
      expect(await store.get(g.sessionId)).toMatchObject({ epoch: 0, lastCommit: undefined });
      expect(await store.retract(g.sessionId, 0, 'c-a')).toBe(false);
      expect(await store.advance(g.sessionId, 0, 'c-b')).toEqual({ status: 'advanced', epoch: 1 });
    });

    it('forgets a group, sweeps expired ones in bounded batches, and caps how many it holds', async () => {
      const store = await open({ maxGroups: 3 });
      const now = Date.now();
      const [a, b, c] = [group({ expiresAt: now + 10 }), group({ expiresAt: now + 10 }), group()];
      for (const g of [a, b, c]) expect((await store.create(g)).status).toBe('created');
      expect(await store.create(group())).toEqual({ status: 'full' });
      await store.delete(c.sessionId);
      await store.delete(c.sessionId);
      expect(await store.get(c.sessionId)).toBeUndefined();
      expect(await store.sweepExpired(now + 20, 1)).toBe(1);
      expect(await store.sweepExpired(now + 20, 10)).toBe(1);
      expect(await store.size()).toBe(0);
      expect((await store.create(group())).status).toBe('created');
    });

    it('refuses input it should never get', async () => {
      const store = await open();
      await expect(store.create(group({ sessionId: '' }))).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.create(group({ epoch: -1 }))).rejects.toBeInstanceOf(StoreInputError);
      await expect(store.advance('ses-x', 1.5, 'c')).rejects.toBeInstanceOf(StoreInputError);
      expect(await store.size()).toBe(0);
    });

    it('refuses every call once closed', async () => {
      const h = await harnesses.open({});
      await h.close();
      await expect(h.store.get('ses-x')).rejects.toBeInstanceOf(StoreClosedError);
      await expect(h.store.advance('ses-x', 0, 'c')).rejects.toBeInstanceOf(StoreClosedError);
    });

    if (durable) {
      it('keeps the epoch and the winning commit across a reopen', async () => {
        const h = await harnesses.open({});
        const g = group();
        await h.store.create(g);
        await h.store.advance(g.sessionId, 0, 'c-1');
        const again = await harnesses.reopen(h);
        expect(await again.store.get(g.sessionId)).toMatchObject({ epoch: 1, lastCommit: 'c-1' });
        expect(await again.store.advance(g.sessionId, 0, 'c-2')).toEqual({ status: 'conflict', epoch: 1 });
        expect(await again.store.advance(g.sessionId, 0, 'c-1')).toEqual({ status: 'repeat', epoch: 1 });
      });
    }
  });
}
