import type { SessionRecord, SessionStore } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, Harnesses } from './harness.js';

export type SessionFactory = (options: { maxSessions?: number }) => Promise<Harness<SessionStore>>;

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
    resumptionTokens: [{ hash: 'x3Jz6gL0nP5Yl1cHkQ6jv4q2r0bLq1yYyW9oU2m6mX4', identity: 'did:key:z6MkAlice' }],
    createdAt: now,
    expiresAt: now + HOUR,
    ...overrides,
  } as SessionRecord;
}

/**
 * The adapter suite of `SessionStore` (@wmp/session): `MemorySessionStore` and the relay's
 * SQLite store run exactly this. Callers never rely on object identity (the interface says so),
 * so neither does the suite.
 */
export function sessionStoreSuite(name: string, factory: SessionFactory, durable = false): void {
  describe(`SessionStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (options: { maxSessions?: number } = {}) => (await harnesses.open(options)).store;

    it('stores, reads back, replaces and deletes a record', async () => {
      const store = await open();
      const r = record();
      expect(await store.get(r.id)).toBeUndefined();
      await store.put(r);
      expect(await store.get(r.id)).toEqual(r);
      const changed = record({
        id: r.id,
        state: 'pending',
        challenge: { value: 'c'.repeat(43), expiresAt: r.createdAt + 60_000 },
        initiator: undefined,
        resumptionTokens: [{ hash: 'h'.repeat(43), identity: undefined }],
      });
      await store.put(changed);
      const back = await store.get(r.id);
      expect(back).toEqual(changed);
      // Keys the record type requires are present even when undefined (JSON would drop them).
      expect(Object.keys(back!)).toContain('initiator');
      await store.delete(r.id);
      expect(await store.get(r.id)).toBeUndefined();
      await store.delete(r.id);
    });

    it('keeps records apart by id', async () => {
      const store = await open();
      const [a, b] = [record(), record()];
      await Promise.all([store.put(a), store.put(b)]);
      await store.delete(a.id);
      expect(await store.get(a.id)).toBeUndefined();
      expect(await store.get(b.id)).toEqual(b);
    });

    it('sweeps sessions that expired at or before now and returns how many', async () => {
      const store = await open();
      const now = Date.now();
      const gone = [record({ expiresAt: now - 1 }), record({ expiresAt: now })];
      const kept = record({ expiresAt: now + 1 });
      for (const r of [...gone, kept]) await store.put(r);
      expect(await store.sweep(now)).toBe(2);
      expect(await store.get(gone[0]!.id)).toBeUndefined();
      expect(await store.get(kept.id)).toEqual(kept);
      expect(await store.sweep(now)).toBe(0);
    });

    it('refuses a new session beyond maxSessions, still updates existing ones', async () => {
      const store = await open({ maxSessions: 2 });
      const [a, b] = [record(), record()];
      await store.put(a);
      await store.put(b);
      await expect(store.put(record())).rejects.toBeInstanceOf(RangeError);
      await store.put({ ...a, state: 'closed' });
      expect((await store.get(a.id))?.state).toBe('closed');
      await store.delete(b.id);
      await store.put(record());
    });

    // Only durable adapters reopen: the memory run has no such test at all.
    if (durable)
      it('survives close and reopen, so a client resumes across a relay restart', async () => {
        const h = await harnesses.open({});
        if (!h.reopen) throw new Error('a durable adapter must reopen');
        const records = Array.from({ length: 10 }, () => record());
        await Promise.all(records.map((r) => h.store.put(r)));
        await h.store.delete(records[0]!.id);
        const again = (await harnesses.reopen(h)).store;
        expect(await again.get(records[0]!.id)).toBeUndefined();
        for (const r of records.slice(1)) expect(await again.get(r.id)).toEqual(r);
      });
  });
}
