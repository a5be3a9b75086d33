import { afterEach, describe, expect, it } from 'vitest';
import {
  type EvidenceCase,
  type EvidenceEntry,
  type EvidenceLimits,
  type EvidenceStore,
  StoreClosedError,
  StoreInputError,
} from '../../index.js';
import { type Harness, Harnesses } from './harness.js';

export type EvidenceFactory = (limits: Partial<EvidenceLimits>) => Promise<Harness<EvidenceStore>>;

const ALICE = 'did:key:z6MkAlice';
const BOB = 'did:key:z6MkBob';
const CAROL = 'did:key:z6MkCarol';
const RELAY = 'did:key:z6MkRelay';
const HOUR = 3600_000;
const YEAR = 365 * 24 * HOUR;

let n = 0;
function evidenceCase(overrides: Partial<EvidenceCase> = {}): EvidenceCase {
  n++;
  return {
    messageId: `msg-${n}`,
    sender: ALICE,
    recipients: [BOB],
    sessionId: 'ses-a',
    contentHash: `hash${n}`,
    submittedAt: Date.now(),
    firstEvidenceId: `ev-first-${n}`,
    eventTypes: ['submission_accepted', 'delivery_confirmed'],
    via: undefined,
    consignment: undefined,
    expiresAt: Date.now() + HOUR,
    ...overrides,
  };
}

function entry(overrides: Partial<EvidenceEntry> = {}): EvidenceEntry {
  n++;
  const id = overrides.id ?? `ev-${n}`;
  return {
    id,
    messageId: 'msg-x',
    sender: ALICE,
    sessionId: 'ses-a',
    eventType: 'delivery_confirmed',
    eventTime: Date.now(),
    issuer: RELAY,
    parties: [ALICE, BOB],
    body: JSON.stringify({ evidence: { evidence_id: id }, signed_evidence: 'h..s' }),
    expiresAt: Date.now() + 5 * YEAR,
    ...overrides,
  };
}

/**
 * The adapter suite of `EvidenceStore`: cases opened once with their first record, records kept
 * once per id, served by message or by session only to their parties, in pages, the cap on
 * records, retention. Every adapter runs exactly this; `factory` opens a fresh, empty store.
 */
export function evidenceStoreSuite(name: string, factory: EvidenceFactory, durable = false): void {
  describe(`EvidenceStore: ${name}`, () => {
    const harnesses = new Harnesses(factory);
    afterEach(() => harnesses.closeAll());
    const open = async (limits: Partial<EvidenceLimits> = {}) => (await harnesses.open(limits)).store;

    it('opens a case once; a case is per message and sender', async () => {
      const store = await open();
      const c = evidenceCase();
      const [a, b] = await Promise.all([store.open(c), store.open({ ...c, contentHash: 'other' })]);
      expect([a, b].sort()).toEqual(['exists', 'opened']);
      const held = await store.caseOf(c.messageId, ALICE);
      expect(held).toEqual(a === 'opened' ? c : { ...c, contentHash: 'other' });
      // Again (a retry, another node): nothing more is written.
      expect(await store.open({ ...c, contentHash: 'third' })).toBe('exists');
      expect(await store.caseOf(c.messageId, ALICE)).toEqual(held);
      // Carol chose the same message id for a message of hers: a case of its own.
      expect(await store.caseOf(c.messageId, CAROL)).toBeUndefined();
      const carols = evidenceCase({
        messageId: c.messageId,
        sender: CAROL,
        via: RELAY,
        sessionId: undefined,
        consignment: 'consented',
      });
      expect(await store.open(carols)).toBe('opened');
      expect(await store.caseOf(c.messageId, CAROL)).toEqual(carols);
      // Cases are no records.
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
      expect(await store.overview()).toMatchObject({ records: 0, cases: 2 });
    });

    it('keeps a record once per id, and hands out copies', async () => {
      const store = await open();
      const e = entry({ sessionId: undefined });
      expect(await store.add(e)).toBe('stored');
      expect(await store.add({ ...e, body: '{"changed":true}' })).toBe('exists');
      const got = await store.get(e.id);
      expect(got).toEqual(e);
      (got!.parties as string[]).push(CAROL);
      expect((await store.get(e.id))!.parties).toEqual([ALICE, BOB]);
      expect(await store.get('ev-none')).toBeUndefined();
      const { count, bytes } = await store.totals();
      expect(count).toBe(1);
      expect(bytes).toBe(new TextEncoder().encode(e.body).length);
    });

    it('serves a message only to its parties, in the order stored, page by page', async () => {
      const store = await open();
      const mine = [1, 2, 3, 4, 5].map((i) => entry({ messageId: 'msg-m', eventTime: Date.now() + i }));
      const carolsOnly = entry({ messageId: 'msg-m', parties: [ALICE, CAROL] });
      const otherMessage = entry({ messageId: 'msg-other' });
      for (const e of [mine[0]!, mine[1]!, carolsOnly, mine[2]!, otherMessage, mine[3]!, mine[4]!]) await store.add(e);

      const first = await store.find({ messageId: 'msg-m' }, BOB, undefined, 2);
      expect(first.entries.map((e) => e.id)).toEqual([mine[0]!.id, mine[1]!.id]);
      expect(first.total).toBe(5);
      expect(first.next).toBeDefined();
      const second = await store.find({ messageId: 'msg-m' }, BOB, first.next, 2);
      expect(second.entries.map((e) => e.id)).toEqual([mine[2]!.id, mine[3]!.id]);
      const last = await store.find({ messageId: 'msg-m' }, BOB, second.next, 2);
      expect(last.entries.map((e) => e.id)).toEqual([mine[4]!.id]);
      expect(last.next).toBeUndefined();
      expect(last.total).toBe(5);
      // The sender sees all six; a stranger none; Carol only hers.
      expect((await store.find({ messageId: 'msg-m' }, ALICE, undefined, 100)).total).toBe(6);
      expect(await store.find({ messageId: 'msg-m' }, 'did:key:z6MkMallory', undefined, 100)).toEqual({
        entries: [],
        total: 0,
        next: undefined,
      });
      expect((await store.find({ messageId: 'msg-m' }, CAROL, undefined, 100)).entries).toEqual([carolsOnly]);
    });

    it('serves a session within a time range', async () => {
      const store = await open();
      const t = Date.now();
      const early = entry({ sessionId: 'ses-s', eventTime: t - 10_000 });
      const middle = entry({ sessionId: 'ses-s', eventTime: t });
      const late = entry({ sessionId: 'ses-s', eventTime: t + 10_000 });
      const elsewhere = entry({ sessionId: 'ses-other', eventTime: t });
      for (const e of [early, middle, late, elsewhere]) await store.add(e);
      const ids = async (query: Parameters<EvidenceStore['find']>[0]) =>
        (await store.find(query, ALICE, undefined, 100)).entries.map((e) => e.id);
      expect(await ids({ sessionId: 'ses-s' })).toEqual([early.id, middle.id, late.id]);
      expect(await ids({ sessionId: 'ses-s', since: t })).toEqual([middle.id, late.id]);
      expect(await ids({ sessionId: 'ses-s', until: t })).toEqual([early.id, middle.id]);
      expect(await ids({ sessionId: 'ses-s', since: t, until: t })).toEqual([middle.id]);
      expect((await store.find({ sessionId: 'ses-s', since: t }, ALICE, undefined, 100)).total).toBe(2);
    });

    it('refuses new records at maxRecords, in the same operation as the insert', async () => {
      const store = await open({ maxRecords: 2 });
      expect(store.limits.maxRecords).toBe(2);
      const [a, b] = [entry(), entry()];
      const results = await Promise.all([store.add(a), store.add(b), store.add(entry()), store.add(entry())]);
      expect(results.filter((r) => r === 'stored')).toHaveLength(2);
      expect(results.filter((r) => r === 'full')).toHaveLength(2);
      // A retry of a record held is still `exists`.
      const held = results[0] === 'stored' ? a : b;
      expect(await store.add(held)).toBe('exists');
      expect(await store.totals()).toMatchObject({ count: 2 });
    });

    it('sweeps records past retention and cases past expiry, in bounded batches', async () => {
      const store = await open();
      const now = Date.now();
      const kept = entry({ expiresAt: now + YEAR });
      const old = [1, 2, 3].map((i) => entry({ expiresAt: now - i }));
      for (const e of [kept, ...old]) await store.add(e);
      const gone = evidenceCase({ expiresAt: now - 1 });
      const open1 = evidenceCase({ expiresAt: now + HOUR });
      for (const c of [gone, open1]) {
        await store.open(c);
        await store.add(entry({ id: c.firstEvidenceId, messageId: c.messageId, expiresAt: now + YEAR }));
      }
      expect(await store.overview()).toMatchObject({ records: 6, cases: 2 });
      expect(await store.sweepExpired(now, 2)).toBe(2);
      expect(await store.sweepExpired(now, 1000)).toBe(2);
      expect(await store.sweepExpired(now, 1000)).toBe(0);
      expect(await store.get(kept.id)).toEqual(kept);
      for (const e of old) expect(await store.get(e.id)).toBeUndefined();
      expect(await store.caseOf(gone.messageId, ALICE)).toBeUndefined();
      expect(await store.caseOf(open1.messageId, ALICE)).toEqual(open1);
      // The first record of a swept case stays for its own retention.
      expect(await store.get(gone.firstEvidenceId)).toBeDefined();
      const overview = await store.overview();
      expect(overview).toMatchObject({ records: 3, cases: 1 });
      expect(overview.bytes).toBe((await store.totals()).bytes);
      expect(overview.oldestAt).toBe(kept.eventTime);
    });

    it('refuses malformed input with StoreInputError and writes nothing', async () => {
      const store = await open();
      const refusals = [
        () => store.add(entry({ parties: [] })),
        () => store.add(entry({ id: '' })),
        () => store.add(entry({ eventTime: Number.NaN })),
        () => store.add(entry({ body: 'x'.repeat(64 * 1024 + 1) })),
        () => store.add(entry({ parties: Array.from({ length: 513 }, (_, i) => `did:key:z${i}`) })),
        () => store.open(evidenceCase({ eventTypes: 'all' as unknown as string[] })),
        () => store.open(evidenceCase({ messageId: '' })),
        () => store.open(evidenceCase({ recipients: [''] })),
        () => store.find({ messageId: 'msg-x' }, ALICE, 'not-a-cursor', 10),
        () => store.find({ messageId: 'msg-x' }, ALICE, undefined, 0),
        () => store.find({} as { messageId: string }, ALICE, undefined, 10),
        () => store.find({ messageId: 'msg-x' }, '', undefined, 10),
        () => store.sweepExpired(Date.now(), 0),
      ];
      for (const refuse of refusals) await expect(refuse()).rejects.toBeInstanceOf(StoreInputError);
      expect(await store.totals()).toEqual({ count: 0, bytes: 0 });
    });

    it('refuses every call once closed', async () => {
      const harness = await harnesses.open({});
      await harness.close();
      const store = harness.store;
      await expect(store.add(entry())).rejects.toBeInstanceOf(StoreClosedError);
      await expect(store.get('ev-1')).rejects.toBeInstanceOf(StoreClosedError);
      await expect(store.caseOf('msg-1', ALICE)).rejects.toBeInstanceOf(StoreClosedError);
      await expect(store.find({ messageId: 'msg-1' }, ALICE, undefined, 10)).rejects.toBeInstanceOf(StoreClosedError);
      await expect(store.totals()).rejects.toBeInstanceOf(StoreClosedError);
    });

    if (durable) {
      it('keeps cases and records across a reopen', async () => {
        const harness = await harnesses.open({});
        const c = evidenceCase({ eventTypes: [] });
        const first = entry({ id: c.firstEvidenceId, messageId: c.messageId });
        const later = entry({ messageId: c.messageId, sessionId: undefined });
        await harness.store.open(c);
        await harness.store.add(first);
        await harness.store.add(later);
        const again = (await harnesses.reopen(harness)).store;
        expect(await again.caseOf(c.messageId, ALICE)).toEqual(c);
        expect((await again.find({ messageId: c.messageId }, BOB, undefined, 10)).entries).toEqual([first, later]);
        expect(await again.totals()).toMatchObject({ count: 2 });
        // Positions go on after a reopen: a new record comes after the old ones.
        const newer = entry({ messageId: c.messageId });
        await again.add(newer);
        const ids = (await again.find({ messageId: c.messageId }, BOB, undefined, 10)).entries.map((e) => e.id);
        expect(ids).toEqual([first.id, later.id, newer.id]);
      });
    }
  });
}
