import {
  resumeWith,
  type SessionRecord,
  type SessionStore,
  SessionStoreFullError,
  type SessionStoreLimits,
  takeChallenge,
  tokenHash,
} from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, Harnesses } from './harness.js';

export type SessionFactory = (limits: Partial<SessionStoreLimits>) => Promise<Harness<SessionStore>>;

const HOUR = 3600_000;

let n = 0;
function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const now = Date.now();
  return {
    id: `ses-${++n}abc`,
    version: '0.1',
    initiator: 'did:key:z6MkAlice',
    participants: ['did:key:z6MkAlice', 'did:key:z6MkBob'],
    capabilities: { messaging: { max_size: 65536 }, offline: { ttl: 3600, max_queued: 100 } },
    security: { mode: 'tls' },
    state: 'active',
    authenticated: ['did:key:z6MkAlice'],
    challenge: undefined,
    resumptionTokens: [{ hash: tokenHash('rt-alice'), identity: 'did:key:z6MkAlice' }],
    createdAt: now,
    ttlSeconds: 3600,
    expiresAt: now + HOUR,
    ...overrides,
  } as SessionRecord;
}

/**
 * The adapter suite of `SessionStore` (@wmp/session): `MemorySessionStore` and every relay adapter
 * run exactly this. Records are immutable, so the suite compares values, never identities.
 */
export function sessionStoreSuite(name: string, factory: SessionFactory, durable = false): void {
  describe(`SessionStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<SessionStoreLimits> = {}) => (await harnesses.open(limits)).store;

    it('creates, reads back, changes and deletes a record', async () => {
      const store = await open();
      const r = record();
      expect(await store.get(r.id)).toBeUndefined();
      await store.create(r);
      expect(await store.get(r.id)).toEqual(r);
      const changed = await store.update(r.id, (s) => ({
        ...s,
        state: 'pending',
        challenge: { value: 'c'.repeat(43), expiresAt: r.createdAt + 60_000 },
        initiator: undefined,
      }));
      const back = await store.get(r.id);
      expect(back).toEqual(changed);
      expect(back?.state).toBe('pending');
      // Keys the record type requires are present even when undefined (JSON would drop them).
      expect(Object.keys(back!)).toContain('initiator');
      await store.delete(r.id);
      expect(await store.get(r.id)).toBeUndefined();
      await store.delete(r.id);
      expect(await store.counts()).toEqual({ sessions: 0, pending: 0 });
    });

    it('refuses a second create of one id and an update of a missing one', async () => {
      const store = await open();
      const r = record();
      await store.create(r);
      await expect(store.create(r)).rejects.toBeInstanceOf(RangeError);
      let called = false;
      expect(
        await store.update('ses-missing', (s) => {
          called = true;
          return s;
        }),
      ).toBeUndefined();
      expect(called).toBe(false);
    });

    it('writes nothing when a change throws, and nothing when it returns the record unchanged', async () => {
      const store = await open();
      const r = record();
      await store.create(r);
      await expect(
        store.update(r.id, () => {
          throw new RangeError('refused');
        }),
      ).rejects.toBeInstanceOf(RangeError);
      expect(await store.get(r.id)).toEqual(r);
      expect(await store.update(r.id, (s) => s)).toEqual(r);
    });

    it('runs racing changes of one session one after another (none is lost)', async () => {
      const store = await open();
      const r = record({ authenticated: [] });
      await store.create(r);
      const who = Array.from({ length: 40 }, (_, i) => `did:key:z6Mk${i}`);
      await Promise.all(
        who.map((id) => store.update(r.id, (s) => ({ ...s, authenticated: [...s.authenticated, id] }))),
      );
      expect([...(await store.get(r.id))!.authenticated].sort()).toEqual([...who].sort());
    });

    it('lets one of many racing resumes use a token, and takes a challenge once', async () => {
      const store = await open();
      const now = Date.now();
      const r = record({ challenge: { value: 'ch-1', expiresAt: now + 60_000 } });
      await store.create(r);
      const uses = Array.from({ length: 8 }, () => resumeWith('rt-alice', 'did:key:z6MkAlice', now));
      const outcomes = await Promise.allSettled(uses.map((u) => store.update(r.id, u.change)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes.filter((x) => x.status === 'rejected')) {
        expect((o as PromiseRejectedResult).reason).toMatchObject({ code: -31000 });
      }
      const takes = Array.from({ length: 8 }, () => takeChallenge(now));
      await Promise.all(takes.map((t) => store.update(r.id, t.change)));
      expect(takes.filter((t) => t.result() !== undefined)).toHaveLength(1);
      expect((await store.get(r.id))?.challenge).toBeUndefined();
    });

    it('keeps records apart by id', async () => {
      const store = await open();
      const [a, b] = [record(), record()];
      await Promise.all([store.create(a), store.create(b)]);
      await store.delete(a.id);
      expect(await store.get(a.id)).toBeUndefined();
      expect(await store.get(b.id)).toEqual(b);
    });

    it('sweeps sessions that expired at or before now and returns how many', async () => {
      const store = await open();
      const now = Date.now();
      const gone = [record({ expiresAt: now - 1 }), record({ expiresAt: now, state: 'pending' })];
      const kept = record({ expiresAt: now + 1 });
      for (const r of [...gone, kept]) await store.create(r);
      expect(await store.counts()).toEqual({ sessions: 3, pending: 1 });
      expect(await store.sweep(now)).toBe(2);
      expect(await store.get(gone[0]!.id)).toBeUndefined();
      expect(await store.get(kept.id)).toEqual(kept);
      expect(await store.sweep(now)).toBe(0);
      expect(await store.counts()).toEqual({ sessions: 1, pending: 0 });
    });

    it('refuses a new session beyond maxSessions with -31007, still changes existing ones', async () => {
      const store = await open({ maxSessions: 2 });
      const [a, b] = [record(), record()];
      await store.create(a);
      await store.create(b);
      const extra = record();
      const refusal = await store.create(extra).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(SessionStoreFullError);
      expect(refusal).toMatchObject({ code: -31007, cap: 'sessions' });
      expect(await store.get(extra.id)).toBeUndefined();
      await store.update(a.id, (s) => ({ ...s, state: 'closed' }));
      expect((await store.get(a.id))?.state).toBe('closed');
      await store.delete(b.id);
      await store.create(record());
    });

    it('holds unauthenticated sessions to their own cap, freed when one authenticates', async () => {
      const store = await open({ maxSessions: 10, maxPendingSessions: 2 });
      const pending = [record({ state: 'pending' }), record({ state: 'pending' })];
      for (const r of pending) await store.create(r);
      await expect(store.create(record({ state: 'pending' }))).rejects.toMatchObject({ code: -31007, cap: 'pending' });
      // Authenticated sessions still fit.
      await store.create(record());
      await store.update(pending[0]!.id, (s) => ({ ...s, state: 'active' }));
      expect(await store.counts()).toEqual({ sessions: 3, pending: 1 });
      await store.create(record({ state: 'pending' }));
      // Becoming pending again needs a slot like a new pending session.
      const active = record();
      await store.create(active);
      await expect(store.update(active.id, (s) => ({ ...s, state: 'pending' }))).rejects.toMatchObject({
        cap: 'pending',
      });
      expect((await store.get(active.id))?.state).toBe('active');
    });

    // Only durable adapters reopen: the memory run has no such test at all.
    if (durable)
      it('survives close and reopen, so a client resumes across a relay restart', async () => {
        const h = await harnesses.open({});
        if (!h.reopen) throw new Error('a durable adapter must reopen');
        const records = Array.from({ length: 10 }, (_, i) => record(i % 3 === 0 ? { state: 'pending' } : {}));
        await Promise.all(records.map((r) => h.store.create(r)));
        await h.store.delete(records[0]!.id);
        const again = (await harnesses.reopen(h)).store;
        expect(await again.get(records[0]!.id)).toBeUndefined();
        for (const r of records.slice(1)) expect(await again.get(r.id)).toEqual(r);
        expect(await again.counts()).toEqual({ sessions: 9, pending: 3 });
      });
  });
}
