// The PostgreSQL queue store's writer against bare batched inserts of the same rows, on a
// throwaway server (test-support/services, fsync on): appends per second through
// `PostgresQueueStore.append` (one node, then two nodes on one database) versus one client
// inserting the same rows with `INSERT ... SELECT FROM unnest(...)` in transactions of 100.
import pg from 'pg';
import { PostgresStore } from '../packages/relay-server/src/postgres.js';
import { startPostgres } from '../test-support/services/index.js';
import { type Benchmark, type BenchReport, median } from './lib.js';
import { bareInsertRate } from './servers/postgres-inserts.js';

const PAIRS = 50;
/** A forwarded deliver frame is about 1.45 KB (bench/relay-routing.bench.ts). */
const BODY = `{"jsonrpc":"2.0","method":"wmp.message.deliver","params":{"pad":"${'x'.repeat(1380)}"}}`;
/** Appends in flight per node: enough to fill batches of 100 while one commits. */
const WINDOW = 400;
const ROUNDS = 5;
const MS = 1500;
const HOUR = 3600_000;

const recipients = Array.from({ length: PAIRS }, (_, i) => `did:key:z6MkRecipient${i}`);
const senders = Array.from({ length: PAIRS }, (_, i) => `did:key:z6MkSender${i}`);
let ids = 0;
const nextId = () => `msg-${(++ids).toString(36).padStart(22, '0')}`;

/** Appends per second through `stores`, each keeping WINDOW appends in flight. */
async function storeRate(stores: PostgresStore[], ms: number): Promise<number> {
  const expiresAt = Date.now() + 24 * HOUR;
  let done = 0;
  let failed: unknown;
  const end = performance.now() + ms;
  const worker = async (store: PostgresStore, lane: number) => {
    for (let n = lane; performance.now() < end; n += WINDOW) {
      const pair = n % PAIRS;
      await store.queue.append(recipients[pair]!, { id: nextId(), sender: senders[pair]!, body: BODY }, { expiresAt });
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(stores.flatMap((s) => Array.from({ length: WINDOW }, (_, lane) => worker(s, lane)))).catch(
    (e: unknown) => {
      failed = e;
    },
  );
  if (failed) throw failed;
  return (done * 1000) / (performance.now() - start);
}

async function truncate(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    "TRUNCATE wmp_messages, wmp_queue_senders; UPDATE wmp_queues SET count = 0, bytes = 0; UPDATE wmp_totals SET count = 0, bytes = 0 WHERE name = 'wmp_queue'",
  );
  await client.end();
}

const bench: Benchmark = {
  name: 'postgres-queue',
  async run(): Promise<BenchReport> {
    const server = await startPostgres({ name: 'bench' });
    try {
      const url = await server.createDatabase('bench');
      const pipeline = process.env.WMP_BENCH_PIPELINE !== '0';
      const limits = { maxQueued: 10_000_000, maxBytes: 2 ** 50, maxTotalBytes: 2 ** 50 };
      const open = () => PostgresStore.open({ url, pipeline, queue: limits });
      const one = [await open()];
      const two = [one[0]!, await open()];
      const bare: number[] = [];
      const single: number[] = [];
      const pair: number[] = [];
      try {
        await storeRate(one, 300); // warm-up: prepared statements, recipient rows
        for (let round = 0; round < ROUNDS; round++) {
          await truncate(url);
          bare.push(await bareInsertRate(url, recipients, senders, BODY, MS));
          await truncate(url);
          single.push(await storeRate(one, MS));
          await truncate(url);
          pair.push(await storeRate(two, MS));
        }
      } finally {
        for (const s of two) await s.close();
      }
      const baseline = median(bare);
      const figures = [
        { name: 'one node', value: median(single) },
        { name: 'two nodes', value: median(pair) },
      ].map((f) => {
        const ratio = f.value / baseline;
        return {
          name: f.name,
          value: f.value,
          unit: 'appends/s',
          ratio,
          target: '>= 0.50 of baseline',
          met: ratio >= 0.5,
        };
      });
      return {
        name: 'postgres-queue',
        baseline: { name: 'bare unnest inserts, 100 per transaction', value: baseline, unit: 'rows/s' },
        figures,
        conditions: { pairs: PAIRS, bodyBytes: BODY.length, window: WINDOW, rounds: ROUNDS, ms: MS, pipeline },
      };
    } finally {
      await server.destroy();
    }
  },
};

export default bench;
