import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { MemoryEvidenceStore } from '../src/index.js';
import { SqliteStore, type SqliteStoreOptions } from '../src/sqlite.js';
import { evidenceStoreSuite } from '../src/storage/testing/evidence-store.suite.js';
import type { Harness } from '../src/storage/testing/harness.js';

// The evidence repository against its shared suite: in memory, and on real SQLite files in a
// temporary directory (`reopen` closes the file and opens it again, as a restart would). The
// PostgreSQL adapter runs the same suite in postgres-stores.test.ts.
const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-evidence-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function sqlite(options: SqliteStoreOptions): Harness<SqliteStore['evidence']> {
  const store = SqliteStore.open(options);
  return {
    store: store.evidence,
    close: () => store.close(),
    reopen: async () => {
      await store.close();
      return sqlite(options);
    },
  };
}

evidenceStoreSuite('memory', async (limits) => {
  const store = new MemoryEvidenceStore(limits);
  return { store, close: async () => store.close() };
});
evidenceStoreSuite('sqlite', async (evidence) => sqlite({ path: join(dir, `relay-${++files}.db`), evidence }), true);
