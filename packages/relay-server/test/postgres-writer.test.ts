import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { gate } from '../../../test-support/gate.js';
import { RelayQueueFullError, StoreWriteError } from '../src/index.js';
import { PostgresStore, type PostgresStoreOptions, type WriteOp } from '../src/postgres.js';
import { freshSchemaUrl } from './support/postgres-schemas.js';

// The batching writer of the PostgreSQL adapters (PostgresWriter), on a real server: what one
// transaction holds, what settles when, what a failure takes down with it.
const HOUR = 3600_000;
const BOB = 'did:key:z6MkBob';
const ALICE = 'did:key:z6MkAlice';
const later = () => ({ expiresAt: Date.now() + HOUR });
let n = 0;
const msg = (sender = ALICE, id = `msg-${++n}`) => ({ id, sender, body: JSON.stringify({ id }) });

const open: PostgresStore[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const c of clients.splice(0)) await c.end();
});

async function store(url: string, options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
  const s = await PostgresStore.open({ url, poolSize: 2, ...options });
  open.push(s);
  return s;
}

/** A plain connection to the same schema, outside the stores (what another reader sees). */
async function sql(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

async function count(client: pg.Client, table: string): Promise<number> {
  return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
}

describe('PostgresWriter', () => {
  it('writes what is queued in one turn in one transaction, and settles each caller after COMMIT', async () => {
    const url = await freshSchemaUrl();
    const s = await store(url);
    const reader = new pg.Pool({ connectionString: url, max: 4 });
    const before = s.writeStats.transactions;
    const visible: number[] = [];
    // Each caller, as soon as it is answered, looks from another connection: its row is committed.
    const appends = Array.from({ length: 100 }, (_, i) =>
      s.queue.append(BOB, msg(ALICE, `m-${i}`), later()).then(async (result) => {
        const { rows } = await reader.query('SELECT seq FROM wmp_messages WHERE recipient = $1 AND message_id = $2', [
          BOB,
          `m-${i}`,
        ]);
        visible.push(Number(rows[0]?.seq));
        return result;
      }),
    );
    const results = await Promise.all(appends);
    expect(s.writeStats.transactions - before).toBe(1);
    expect(results.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(visible.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    await reader.end();
  });

  it('commits with synchronous_commit on, whatever the database default', async () => {
    const url = await freshSchemaUrl();
    const db = await sql(url);
    await db.query('ALTER ROLE CURRENT_USER IN DATABASE ' + db.database + ' SET synchronous_commit = off');
    try {
      const s = await store(url);
      const setting = await s.database.writer.run({
        atomic: true,
        run: async (tx) => (await tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!,
      });
      expect(setting).toEqual({ synchronous_commit: 'on' });
      // The pool's reads see the database default: the setting is the writer's own.
      expect((await s.database.read<{ synchronous_commit: string }>('SHOW synchronous_commit', []))[0]).toEqual({
        synchronous_commit: 'off',
      });
    } finally {
      await db.query('ALTER ROLE CURRENT_USER IN DATABASE ' + db.database + ' RESET synchronous_commit');
    }
  });

  it('splits more than 100 operations into transactions of at most 100', async () => {
    const s = await store(await freshSchemaUrl(), { maxBatch: 40 });
    const before = s.writeStats;
    await Promise.all(Array.from({ length: 100 }, () => s.queue.append(BOB, msg(), later())));
    const after = s.writeStats;
    expect(after.transactions - before.transactions).toBe(3);
    expect(after.operations - before.operations).toBe(100);
    await expect(PostgresStore.open({ url: await freshSchemaUrl(), maxBatch: 101 })).rejects.toBeInstanceOf(RangeError);
  });

  it('rolls a refused operation back alone; the rest of the batch commits', async () => {
    const url = await freshSchemaUrl();
    const s = await store(url, { queue: { maxQueued: 2, maxQueuedPerSender: 2 } });
    const db = await sql(url);
    await db.query('CREATE TABLE t_log (v text PRIMARY KEY)');
    const insert = (v: string, fail?: 'throw'): WriteOp<void> => ({
      run: async (tx) => {
        await tx.query('INSERT INTO t_log (v) VALUES ($1)', [v]);
        if (fail) throw new RangeError(`refused ${v}`);
      },
    });
    const writer = s.database.writer;
    const outcomes = await Promise.allSettled([
      s.queue.append(BOB, msg(), later()),
      writer.run(insert('a', 'throw')), // wrote, then refused: its row goes with its savepoint
      writer.run(insert('b')),
      writer.run(insert('b')), // a statement fails (duplicate key): this one alone
      s.queue.append(BOB, msg(), later()),
      s.queue.append(BOB, msg(), later()), // the queue is full (maxQueued 2)
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
    ]);
    const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason;
    expect(reason(1)).toBeInstanceOf(RangeError);
    expect(reason(3)).toBeInstanceOf(StoreWriteError);
    expect(reason(3).cause).toMatchObject({ code: '23505' });
    expect(reason(5)).toBeInstanceOf(RelayQueueFullError);
    expect((await db.query('SELECT v FROM t_log')).rows).toEqual([{ v: 'b' }]);
    expect(await s.queue.stats(BOB)).toMatchObject({ count: 2 });
  });

  it('isolates an operation whose set-based statement fails, so only that one fails and seqs stay gap-free', async () => {
    const url = await freshSchemaUrl();
    const s = await store(url);
    const db = await sql(url);
    await db.query("ALTER TABLE wmp_messages ADD CONSTRAINT no_poison CHECK (message_id <> 'poison')");
    const retries = s.writeStats.retries;
    const ids = ['a', 'b', 'poison', 'c', 'd'];
    const outcomes = await Promise.allSettled(ids.map((id) => s.queue.append(BOB, msg(ALICE, id), later())));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(StoreWriteError);
    expect(outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.seq] : []))).toEqual([1, 2, 3, 4]);
    expect(s.writeStats.retries - retries).toBe(1);
    expect(await s.queue.stats(BOB)).toMatchObject({ count: 4 });
    expect((await s.queue.append(BOB, msg(), later())).seq).toBe(5);
  });

  it('makes a recipient row again when it is gone although the writer saw it made (lost in a crash)', async () => {
    const url = await freshSchemaUrl();
    const s = await store(url);
    const db = await sql(url);
    expect((await s.queue.append(BOB, msg(), later())).seq).toBe(1);
    // Such a row is inserted without waiting for the disk; a crash before the next commit loses it.
    await db.query('DELETE FROM wmp_messages; DELETE FROM wmp_queue_senders; DELETE FROM wmp_queues');
    await db.query("UPDATE wmp_totals SET count = 0, bytes = 0 WHERE name = 'wmp_queue'");
    const retries = s.writeStats.retries;
    expect(await s.queue.append(BOB, msg(), later())).toEqual({ status: 'queued', seq: 1 });
    expect(s.writeStats.retries - retries).toBe(1);
    expect(await s.queue.stats(BOB)).toMatchObject({ count: 1 });
  });

  it('rejects every caller of a batch whose COMMIT fails with StoreWriteError, and writes none of it', async () => {
    const url = await freshSchemaUrl();
    const s = await store(url);
    const db = await sql(url);
    await db.query(`CREATE TABLE t_parent (id int PRIMARY KEY);
      CREATE TABLE t_child (id int REFERENCES t_parent DEFERRABLE INITIALLY DEFERRED)`);
    // Passes every statement, fails at COMMIT (the deferred foreign key).
    const orphan: WriteOp<void> = {
      run: async (tx) => {
        await tx.query('INSERT INTO t_child (id) VALUES (1)');
      },
    };
    const failures = s.writeStats.failures;
    const outcomes = await Promise.allSettled([
      s.queue.append(BOB, msg(), later()),
      s.database.writer.run(orphan),
      s.queue.append(BOB, msg(), later()),
    ]);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(StoreWriteError);
      expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_STORE_WRITE' });
    }
    expect(s.writeStats.failures - failures).toBe(1);
    expect(await count(db, 'wmp_messages')).toBe(0);
    expect(await s.queue.totals()).toEqual({ count: 0, bytes: 0 });
    // The writer goes on with the next batch: nothing of the failed one was kept in memory.
    expect(await s.queue.append(BOB, msg(), later())).toEqual({ status: 'queued', seq: 1 });
  });

  it('runs a transaction again, totals locked, when a cap decision was made on a total another node changed', async () => {
    const url = await freshSchemaUrl();
    const [a, b] = [await store(url), await store(url)];
    const db = await sql(url);
    await db.query("INSERT INTO wmp_totals (name) VALUES ('t_cap')");
    let runs = 0;
    const { opened: bHasCommitted, open: bCommitted } = gate();
    const { opened: running, open: started } = gate();
    // On node a: 60 of 100 fit when it reads the total (0); it waits until node b has committed 60.
    const take60: WriteOp<boolean> = {
      run: async (tx) => {
        runs++;
        const totals = await tx.totals();
        const fits = totals.fits('t_cap', 'bytes', 60, 100);
        if (fits) totals.add('t_cap', 0, 60);
        if (runs === 1) {
          started();
          await bHasCommitted;
        }
        return fits;
      },
    };
    const onA = a.database.writer.run(take60);
    await running;
    const other: WriteOp<boolean> = {
      run: async (tx) => {
        const totals = await tx.totals();
        const fits = totals.fits('t_cap', 'bytes', 60, 100);
        if (fits) totals.add('t_cap', 0, 60);
        return fits;
      },
    };
    expect(await b.database.writer.run(other)).toBe(true);
    bCommitted();
    // Its decision no longer holds (60 + 60 > 100): the check at COMMIT fails, the op runs again
    // with the totals row locked, and now refuses.
    expect(await onA).toBe(false);
    expect(runs).toBe(2);
    expect(a.writeStats.retries).toBe(1);
    expect((await db.query("SELECT bytes FROM wmp_totals WHERE name = 't_cap'")).rows[0].bytes).toBe('60');
  });

  it('keeps the store-wide byte cap exact with two nodes appending at once', async () => {
    const url = await freshSchemaUrl();
    const queue = { maxTotalBytes: 10_000, maxBytes: 10_000, maxBytesPerSender: 10_000, maxQueued: 1000 };
    const nodes = [await store(url, { queue }), await store(url, { queue })];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 300 }, (_, i) =>
        nodes[i % 2]!.queue.append(`did:key:z6MkR${i % 7}`, msg(`did:key:z6MkS${i % 5}`), { ...later(), bytes: 100 }),
      ),
    );
    const queued = outcomes.filter((o) => o.status === 'fulfilled');
    expect(queued).toHaveLength(100);
    for (const o of outcomes.filter((x) => x.status === 'rejected')) {
      expect((o as PromiseRejectedResult).reason).toMatchObject({ reason: 'total_bytes' });
    }
    expect(await nodes[0]!.queue.totals()).toEqual({ count: 100, bytes: 10_000 });
  });
});
