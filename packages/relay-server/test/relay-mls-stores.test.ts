import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryKeyPackageStore, MemoryMlsGroupStore } from '../src/index.js';
import { openDatabase, SCHEMA_VERSION, SqliteStore, type SqliteStoreOptions } from '../src/sqlite.js';
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

describe('SQLite schema version 2', () => {
  it('migrates a version 1 file in place, keeping what it held', async () => {
    const file = path();
    const store = SqliteStore.open({ path: file });
    await store.queue.append(
      'did:key:z6MkBob',
      { id: 'msg-1', sender: 'did:key:z6MkAlice', body: '{}' },
      {
        expiresAt: Date.now() + 60_000,
      },
    );
    await store.close();
    // Turn the file back into what version 1 wrote: no MLS tables, no MLS totals.
    const db = new Database(file);
    db.exec(`DROP TABLE mls_key_packages; DROP TABLE mls_groups;
      DELETE FROM totals WHERE name IN ('mls_key_packages', 'mls_groups');`);
    db.pragma('user_version = 1');
    db.close();

    const migrated = openDatabase(file);
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(2);
    migrated.close();
    const again = SqliteStore.open({ path: file });
    expect(await again.queue.totals()).toMatchObject({ count: 1 });
    expect(await again.keyPackages.totals()).toEqual({ count: 0, bytes: 0 });
    expect(await again.groups.size()).toBe(0);
    await again.close();
  });
});
