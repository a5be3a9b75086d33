// `importSqliteDatabase`: a relay's SQLite file into an empty cluster database, read back through
// the PostgreSQL adapters exactly as the SQLite ones served it (seqs, counts, parts, order).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCard } from '@wmp/ohan-seal';
import { tokenHash } from '@wmp/session';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreInputError } from '../src/index.js';
import { importSqliteDatabase, PostgresStore, postgresBoxStore } from '../src/postgres.js';
import { openDatabase, SqliteStore } from '../src/sqlite.js';
import { event, party } from '../src/storage/testing/events.js';
import { freshSchemaUrl } from './support/postgres-schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3600_000;
const later = () => ({ expiresAt: Date.now() + HOUR });
const box = { directory: true, strangerBits: 4 } as const;
const caps = { maxQueued: 100, maxBytes: 1 << 20, maxQueuedPerSender: 100, maxBytesPerSender: 1 << 20 };
const BOB = 'did:key:z6MkBob';
const OUTBOX = 'relay:https://b.example';

async function filledSqlite(file: string) {
  const store = SqliteStore.open({ path: file, box });
  const { queue } = store;
  for (let i = 1; i <= 5; i++) {
    await queue.append(
      BOB,
      { id: `m${i}`, sender: 'did:key:z6MkAlice', body: `{"n":${i}}`, notify: i === 2, evidence: i === 4 },
      later(),
    );
  }
  await queue.ack(BOB, ['m1']); // seqs go on from 6, never reused
  await queue.markDelivered(BOB, [3]);
  await queue.appendToPart(
    OUTBOX,
    { id: 'o1', sender: 'did:key:z6MkAlice', body: '{}' },
    { ...later(), part: 'did:key:z6MkDan', caps },
  );
  const [alice, carol] = [party(), party()];
  const now = Date.now();
  for (const p of [alice, carol]) {
    const card = await createCard({ signer: p.signer, enc: p.enc.multikey, relays: ['https://a.example'] });
    expect(await store.box.putCard(card, now)).toBe('stored');
  }
  await store.box.putAllow(carol.key, ['z6MkZed', alice.key, 'z6MkAmy']);
  for (let i = 0; i < 3; i++)
    expect((await store.box.publish(await event(alice, carol, { bits: 4 }))).status).toBe('stored');
  await store.sessions.create({
    id: 'ses-1',
    version: '0.1',
    initiator: BOB,
    participants: [BOB],
    capabilities: { messaging: {} },
    security: { mode: 'tls' },
    state: 'active',
    authenticated: [BOB],
    challenge: undefined,
    resumptionTokens: [{ hash: tokenHash('rt'), identity: BOB }],
    createdAt: now,
    expiresAt: now + HOUR,
  });
  const packages = [1, 2].map((i) => ({
    ref: `ref-${i}`,
    keyPackage: `AAEA${i}`,
    cipherSuite: 1,
    expiresAt: now + HOUR,
  }));
  await store.keyPackages.publish(BOB, packages, { now, maxPerIdentity: 10 });
  await store.groups.create({
    sessionId: 'ses-g',
    groupId: 'Z3JvdXA',
    cipherSuite: 1,
    epoch: 3,
    expiresAt: now + HOUR,
  });
  // Two records of one message (the first opens its case), read back in the order stored.
  const record = (id: string, eventType: string) => ({
    id,
    messageId: 'm4',
    sender: 'did:key:z6MkAlice',
    sessionId: 'ses-a',
    eventType,
    eventTime: now,
    issuer: 'did:key:z6MkRelay',
    parties: ['did:key:z6MkAlice', BOB],
    body: `{"evidence":{"evidence_id":"${id}"}}`,
    expiresAt: now + 1000 * HOUR,
  });
  await store.evidence.open({
    messageId: 'm4',
    sender: 'did:key:z6MkAlice',
    recipients: [BOB],
    sessionId: 'ses-a',
    contentHash: 'aGFzaA',
    submittedAt: now,
    firstEvidenceId: 'ev-b',
    eventTypes: [],
    via: undefined,
    consignment: 'consented',
    expiresAt: now + HOUR,
  });
  await store.evidence.add(record('ev-b', 'submission_accepted'));
  await store.evidence.add(record('ev-a', 'delivery_confirmed'));
  return { store, carol };
}

/** What a relay reads of its stores: equal on both sides after the copy. */
async function snapshot(store: SqliteStore | PostgresStore, carolKey: string) {
  const s = store as SqliteStore;
  return {
    bob: await s.queue.after(BOB, undefined, 100),
    outbox: await s.queue.after(OUTBOX, undefined, 100),
    part: await s.queue.partStats(OUTBOX, 'did:key:z6MkDan'),
    queueTotals: await s.queue.totals(),
    queues: await s.inventory.queues(undefined, 100),
    boxes: await s.inventory.boxes(undefined, 100),
    carol: await s.box.fetch(carolKey, 0, 100),
    allow: await s.box.getAllow(carolKey),
    boxTotals: await s.box.totals(),
    cards: await s.box.cardCount(),
    card: await s.box.getCard(carolKey, Date.now()),
    sessions: await s.sessions.counts(),
    session: await s.sessions.get('ses-1'),
    group: await s.groups.get('ses-g'),
    evidence: await s.evidence.find({ messageId: 'm4' }, BOB, undefined, 10),
    evidenceCase: await s.evidence.caseOf('m4', 'did:key:z6MkAlice'),
    evidenceTotals: await s.evidence.totals(),
  };
}

describe('importSqliteDatabase', () => {
  it('copies a relay file into an empty cluster database: the PostgreSQL adapters read back the same', async () => {
    const file = join(dir, 'relay.db');
    const { store, carol } = await filledSqlite(file);
    const before = await snapshot(store, carol.key);
    await store.close();

    const source = openDatabase(file);
    const target = await PostgresStore.open({ url: await freshSchemaUrl('import'), box, boxStore: postgresBoxStore });
    try {
      const report = await importSqliteDatabase(source, target.database);
      expect(report.rows).toMatchObject({
        wmp_messages: 5,
        ohan_events: 3,
        ohan_cards: 2,
        wmp_sessions: 1,
        evidence_records: 2,
        evidence_cases: 1,
      });
      expect(await snapshot(target, carol.key)).toEqual(before);
      // Writes go on where the file left off: the next seq, the key packages oldest first.
      expect(await target.queue.append(BOB, { id: 'm6', sender: 'did:key:z6MkAlice', body: '{}' }, later())).toEqual({
        status: 'queued',
        seq: 6,
      });
      expect((await target.keyPackages.take(BOB, 1, Date.now()))?.ref).toBe('ref-1');
      // A second import finds the target in use and changes nothing.
      await expect(importSqliteDatabase(source, target.database)).rejects.toBeInstanceOf(StoreInputError);
      expect((await target.queue.stats(BOB)).count).toBe(5);
    } finally {
      source.close();
      await target.close();
    }
  });
});
