import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { BoxLimits, QueueLimits } from '../src/index.js';
import { SqliteStore, type SqliteStoreOptions } from '../src/sqlite.js';
import { boxStoreSuite } from '../src/storage/testing/box-store.suite.js';
import type { Harness } from '../src/storage/testing/harness.js';
import { queueStoreSuite } from '../src/storage/testing/queue-store.suite.js';
import { sessionStoreSuite } from '../src/storage/testing/session-store.suite.js';
import { storeInventorySuite } from '../src/storage/testing/store-inventory.suite.js';

// The SQLite adapters against the shared suites, on real files in a temporary directory; `reopen`
// closes the file and opens it again, as a restarted relay would.
const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function harness<S>(options: SqliteStoreOptions, pick: (store: SqliteStore) => S): Harness<S> {
  const store = SqliteStore.open(options);
  return {
    store: pick(store),
    close: () => store.close(),
    reopen: async () => {
      await store.close();
      return harness(options, pick);
    },
  };
}

const path = () => join(dir, `relay-${++files}.db`);

queueStoreSuite(
  'sqlite',
  async (queue: Partial<QueueLimits>) => harness({ path: path(), queue }, (s) => s.queue),
  true,
);
boxStoreSuite('sqlite', async (box: Partial<BoxLimits>) => harness({ path: path(), box }, (s) => s.box), true);
sessionStoreSuite('sqlite', async (sessions) => harness({ path: path(), sessions }, (s) => s.sessions), true);
storeInventorySuite('sqlite', async (box) => harness({ path: path(), box }, (s) => s), true);
