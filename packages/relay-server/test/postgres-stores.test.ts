import { PostgresStore, type PostgresStoreOptions, postgresBoxStore } from '../src/postgres.js';
import { evidenceStoreSuite } from '../src/storage/testing/evidence-store.suite.js';
import type { Harness } from '../src/storage/testing/harness.js';
import { keyPackageStoreSuite } from '../src/storage/testing/key-package-store.suite.js';
import { mlsGroupStoreSuite } from '../src/storage/testing/mls-group-store.suite.js';
import { queueStoreSuite } from '../src/storage/testing/queue-store.suite.js';
import { sessionStoreSuite } from '../src/storage/testing/session-store.suite.js';
import { storeInventorySuite } from '../src/storage/testing/store-inventory.suite.js';
import { freshSchemaUrl } from './support/postgres-schemas.js';

// The PostgreSQL adapters against the shared suites, on a real server (the run's shared one):
// each store on a fresh schema; `reopen` closes the store (writer and pool) and opens the same
// database again, as a restarted node would.
async function harness<S>(options: PostgresStoreOptions, pick: (store: PostgresStore) => S): Promise<Harness<S>> {
  const store = await PostgresStore.open(options);
  return {
    store: pick(store),
    close: () => store.close(),
    reopen: async () => {
      await store.close();
      return harness(options, pick);
    },
  };
}

const open = async <S>(options: Omit<PostgresStoreOptions, 'url'>, pick: (store: PostgresStore) => S) =>
  harness({ url: await freshSchemaUrl(), poolSize: 2, ...options }, pick);

storeInventorySuite(
  'postgres',
  (box) =>
    open({ box, boxStore: postgresBoxStore }, (s) => ({
      queue: s.queue,
      box: s.box!,
      sessions: s.sessions,
      inventory: s.inventory,
    })),
  true,
);
queueStoreSuite('postgres', (queue) => open({ queue }, (s) => s.queue), true);
sessionStoreSuite('postgres', (sessions) => open({ sessions }, (s) => s.sessions), true);
keyPackageStoreSuite('postgres', (keyPackages) => open({ keyPackages }, (s) => s.keyPackages), true);
evidenceStoreSuite('postgres', (evidence) => open({ evidence }, (s) => s.evidence), true);
mlsGroupStoreSuite(
  'postgres',
  ({ maxGroups }) => open(maxGroups === undefined ? {} : { maxGroups }, (s) => s.groups),
  true,
);
