import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryKeyPackageStore, MemoryMlsGroupStore } from '../src/index.js';
import { openDatabase, SCHEMA_VERSION, SqliteStore, type SqliteStoreOptions } from '../src/sqlite.js';
import { SCHEMA_V1 } from '../src/storage/sqlite/sqlite-schema.js';
import type { Harness } from '../src/storage/testing/harness.js';
import { keyPackageStoreSuite } from '../src/storage/testing/key-package-store.suite.js';
import { mlsGroupStoreSuite } from '../src/storage/testing/mls-group-store.suite.js';

// The key package and MLS group stores against their shared suites: in memory, and on real SQLite
// files in a temporary directory (`reopen` closes the file and opens it again, as a restart would).
const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-mls-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const path = () => join(dir, `relay-${++files}.db`);

function sqlite<S>(options: SqliteStoreOptions, pick: (store: SqliteStore) => S): Harness<S> {
  const store = SqliteStore.open(options);
  return {
    store: pick(store),
    close: () => store.close(),
    reopen: async () => {
      await store.close();
      return sqlite(options, pick);
    },
  };
}

keyPackageStoreSuite('memory', async (limits) => {
  const store = new MemoryKeyPackageStore(limits);
  return { store, close: async () => store.close() };
});
keyPackageStoreSuite(
  'sqlite',
  async (keyPackages) => sqlite({ path: path(), keyPackages }, (s) => s.keyPackages),
  true,
);

mlsGroupStoreSuite('memory', async (options) => {
  const store = new MemoryMlsGroupStore(options);
  return { store, close: async () => store.close() };
});
mlsGroupStoreSuite(
  'sqlite',
  async ({ maxGroups }) => sqlite({ path: path(), ...(maxGroups === undefined ? {} : { maxGroups }) }, (s) => s.groups),
  true,
);

describe('SQLite schema migrations', () => {
  it('migrates a version 1 file in place to the current version, keeping what it held', async () => {
    const file = path();
    // A file as version 1 wrote it: one queued message (Alice -> Bob), one pending session, a card.
    const db = new Database(file);
    db.exec(SCHEMA_V1);
    const now = Date.now();
    db.exec(`INSERT INTO wmp_queues VALUES ('did:key:z6MkBob', 2, 1, 2);
      INSERT INTO wmp_messages VALUES ('did:key:z6MkBob', 1, 'msg-1', 'did:key:z6MkAlice', ${now + 60_000}, 2, '{}');
      UPDATE totals SET count = 1, bytes = 2 WHERE name = 'wmp_queue';
      INSERT INTO wmp_sessions VALUES ('ses-1', ${now + 60_000}, '{"id":"ses-1","state":"pending","resumptionTokens":[]}');
      UPDATE totals SET count = 1 WHERE name = 'sessions';
      INSERT INTO ohan_cards VALUES ('z6MkCard', ${now}, '{}');`);
    db.pragma('user_version = 1');
    db.close();

    const migrated = openDatabase(file);
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(7);
    // Version 7: due times; a message of an earlier version is not held.
    expect(migrated.prepare('SELECT due_at FROM wmp_messages').pluck().get()).toBeNull();
    // Version 6: the evidence repository, empty; the message of version 1 is under no evidence.
    expect(migrated.prepare('SELECT evidence FROM wmp_messages').pluck().get()).toBe(0);
    expect(migrated.prepare("SELECT count FROM totals WHERE name = 'evidence'").pluck().get()).toBe(0);
    expect(migrated.prepare('SELECT count(*) FROM evidence_records').pluck().get()).toBe(0);
    // Version 5: arrival times; a message of an earlier version has none (0: unknown age).
    expect(migrated.prepare('SELECT queued_at FROM wmp_messages').pluck().get()).toBe(0);
    // Version 4: queues may be partitioned (a peer's outbox); the message of version 1 is in no part.
    expect(migrated.prepare('SELECT part FROM wmp_messages').pluck().get()).toBeNull();
    expect(migrated.prepare('SELECT count(*) FROM wmp_queue_parts').pluck().get()).toBe(0);
    // Version 3 counted what version 1 held: each sender's part of each queue, pending sessions, cards.
    expect(migrated.prepare('SELECT * FROM wmp_queue_senders').all()).toEqual([
      { recipient: 'did:key:z6MkBob', sender: 'did:key:z6MkAlice', count: 1, bytes: 2 },
    ]);
    expect(migrated.prepare("SELECT count FROM totals WHERE name = 'pending_sessions'").pluck().get()).toBe(1);
    expect(migrated.prepare("SELECT count FROM totals WHERE name = 'ohan_cards'").pluck().get()).toBe(1);
    expect(migrated.prepare('SELECT expires_at FROM ohan_cards').pluck().get()).toBe(now + 90 * 86_400_000);
    migrated.close();
    const again = SqliteStore.open({ path: file });
    expect(await again.queue.totals()).toMatchObject({ count: 1 });
    expect(await again.sessions.counts()).toEqual({ sessions: 1, pending: 1 });
    expect(await again.keyPackages.totals()).toEqual({ count: 0, bytes: 0 });
    expect(await again.groups.size()).toBe(0);
    expect(await again.evidence.totals()).toEqual({ count: 0, bytes: 0 });
    await again.close();
  });
});
