import type { OhanEvent } from '@wmp/ohan-seal';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../test-support/services/index.js';
import { type BoxLimits, type BoxStore, MemoryBoxStore, StoreWriteError } from '../src/index.js';
import { migrateBoxSchema } from '../src/storage/postgres/postgres-box-schema.js';
import { PostgresBoxStore } from '../src/storage/postgres/postgres-box-store.js';
import { event, type Party, party } from '../src/storage/testing/events.js';
import { PostgresBoxes } from './fixtures/postgres-box.js';

// The PostgreSQL box when a write fails: one operation of a batch that the server refuses is
// rejected alone and leaves no trace, the rest of its batch commits; a server that goes away
// fails every write with StoreWriteError, and once it is back the box carries on with exactly
// what had committed. The memory box, fed only what committed, is the reference.

const LIMITS: Partial<BoxLimits> = { directory: false, strangerBits: 4, recipientBytes: 3000 };
const SMALL = { bits: 4 };

async function observe(box: BoxStore, parties: readonly Party[]) {
  const out = [];
  for (const p of parties) {
    const { events } = await box.fetch(p.key, 0, 500);
    out.push({
      queue: events.map((e) => [e.seq, e.id]),
      recipient: await box.recipientStats(p.key),
      sender: await box.senderStats(p.key),
    });
  }
  return { out, totals: await box.totals() };
}

const boxes = new PostgresBoxes('box_faults');

describe('PostgreSQL box writes that fail', () => {
  it('an operation the server refuses is rejected alone; the rest of its batch commits', async () => {
    const h = await boxes.open(LIMITS);
    const box = h.store;
    const memory = new MemoryBoxStore(LIMITS);
    const [alice, bob, carol, dave] = [party(), party(), party(), party()];
    const parties = [alice, bob, carol, dave];
    try {
      const committed = [await event(alice, bob, SMALL), await event(carol, bob, { bits: 5 })];
      for (const b of [box, memory]) for (const e of committed) expect((await b.publish(e)).status).toBe('stored');

      // One batch: a publish, a publish PostgreSQL refuses (a NUL in a key, which text cannot
      // hold), one that evicts (Bob is full at three), and a delivery.
      const good = [
        await event(dave, carol, SMALL),
        await event(dave, bob, SMALL),
        await event(alice, bob, { bits: 6 }),
      ];
      const bad = { ...(await event(dave, carol, SMALL)), to: `${carol.key}\u0000` } as OhanEvent;
      const results = await Promise.allSettled([
        box.publish(good[0]!),
        box.publish(bad),
        box.publish(good[1]!),
        box.publish(good[2]!),
        box.delivered(bob.key, [committed[1]!.id]),
      ]);
      const expected = [
        ...(await Promise.all(good.map((e) => memory.publish(e)))),
        await memory.delivered(bob.key, [committed[1]!.id]),
      ];
      expect(results[1]).toMatchObject({ status: 'rejected', reason: expect.any(StoreWriteError) });
      expect(results.filter((_, i) => i !== 1)).toEqual(expected.map((value) => ({ status: 'fulfilled', value })));
      expect(expected).toMatchObject([{ status: 'stored' }, { status: 'stored' }, { status: 'stored', evicted: 1 }, 1]);
      expect(await observe(box, parties)).toEqual(await observe(memory, parties));
      // The batch's fast path failed on the bad key (one statement for all), then ran again without it.
      expect(box.writeStats).toMatchObject({ slowRetries: 1, refused: 1, failures: 0 });
    } finally {
      await h.close();
    }
  });

  it('a batch waits for the box lock at most lockTimeoutMs, then fails alone; the box carries on', async () => {
    const schema = await boxes.schema();
    const h = await boxes.on(schema, LIMITS, { lockTimeoutMs: 300 });
    // Another node, stuck while it holds the box lock.
    const stuck = new pg.Client({ connectionString: await boxes.url(), options: `-c search_path=${schema}` });
    await stuck.connect();
    const [alice, bob] = [party(), party()];
    try {
      await stuck.query('BEGIN; SELECT 1 FROM ohan_box_totals WHERE id = 1 FOR UPDATE');
      const e = await event(alice, bob, SMALL);
      await expect(h.store.publish(e)).rejects.toBeInstanceOf(StoreWriteError);
      expect(await h.store.totals()).toEqual({ count: 0, bytes: 0 });
      await stuck.query('ROLLBACK');
      expect(await h.store.publish(e)).toMatchObject({ status: 'stored', seq: 1 });
    } finally {
      await stuck.end();
      await h.close();
    }
  });

  describe('on a server of its own', () => {
    let server: PostgresServer | undefined;
    afterAll(() => server?.destroy());

    it('fails writes with StoreWriteError while the server is down, and carries on once it is back', async () => {
      server = await startPostgres({ name: 'box-down' });
      const pool = new pg.Pool({ connectionString: await server.createDatabase('box'), max: 4 });
      pool.on('error', () => undefined);
      const box = new PostgresBoxStore(pool, LIMITS);
      const memory = new MemoryBoxStore(LIMITS);
      const [alice, bob, carol] = [party(), party(), party()];
      try {
        await migrateBoxSchema(pool);
        const before = [await event(alice, bob, SMALL), await event(carol, bob, SMALL)];
        for (const b of [box, memory]) for (const e of before) expect((await b.publish(e)).status).toBe('stored');

        await server.stop({ mode: 'immediate' });
        const down = await Promise.allSettled([
          box.publish(await event(alice, carol, SMALL)),
          box.delivered(bob.key, [before[0]!.id]),
          box.sweepExpired(Date.now(), 10),
          box.putAllow(bob.key, [alice.key]),
        ]);
        for (const r of down) expect(r).toMatchObject({ status: 'rejected', reason: expect.any(StoreWriteError) });

        await server.start();
        // Connections broken by the crash are dropped by the pool or by the writer: the next writes work.
        const after = await event(alice, bob, SMALL);
        let answer: unknown;
        for (let i = 0; i < 5 && answer === undefined; i++) {
          answer = await box.publish(after).catch((error: unknown) => {
            if (!(error instanceof StoreWriteError)) throw error;
            return undefined;
          });
        }
        expect(answer).toEqual(await memory.publish(after));
        expect(await observe(box, [alice, bob, carol])).toEqual(await observe(memory, [alice, bob, carol]));
      } finally {
        await box.close();
        await pool.end();
      }
    }, 60_000);
  });
});
