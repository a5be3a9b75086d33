import type { BoxLimits } from '../src/index.js';
import { boxStoreSuite } from '../src/storage/testing/box-store.suite.js';
import { PostgresBoxes } from './fixtures/postgres-box.js';

// The PostgreSQL box against the shared box suite, on the run's shared PostgreSQL server; each
// box in a schema of its own, `reopen` on the same schema with a new pool.
const boxes = new PostgresBoxes('box_suite');

boxStoreSuite('postgres', (limits: Partial<BoxLimits>) => boxes.open(limits), true);
