import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BoxLimits, type BoxStore, MemoryBoxStore, StoreWriteError } from '../src/node.js';
import { openDatabase, SqliteBoxStore, WriteQueue } from '../src/sqlite.js';
import { event, type Party, party } from '../src/storage/testing/events.js';

// The SQLite box keeps its running totals in a write-back cache written once per transaction. When
// a transaction fails after box operations ran in it, none of them may leave a trace: not in the
// tables (SQLite rolls back) and not in the cache (dropped on rollback). The memory box, fed only
// what committed, is the reference.

const dir = mkdtempSync(join(tmpdir(), 'wmp-box-rollback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

describe('SQLite box totals when a transaction rolls back', () => {
  it('leave no trace of the publishes, evictions and deliveries of a failed batch', async () => {
    const db = openDatabase(join(dir, 'box.db'));
    const writer = new WriteQueue(db);
    const sqlite = new SqliteBoxStore(db, writer, LIMITS);
    const memory = new MemoryBoxStore(LIMITS);
    const [alice, bob, carol, dave] = [party(), party(), party(), party()];
    const parties = [alice, bob, carol, dave];
    try {
      const committed = [await event(alice, bob, SMALL), await event(carol, bob, { bits: 5 })];
      for (const box of [sqlite, memory])
        for (const e of committed) expect((await box.publish(e)).status).toBe('stored');

      // One batch: a fast-path publish, one that evicts (Bob is full at three), a delivery, then an
      // operation under which SQLite rolls the transaction back.
      const failed = [
        await event(dave, carol, SMALL),
        await event(dave, bob, SMALL),
        await event(alice, bob, { bits: 6 }),
      ];
      const rollback = db.prepare('ROLLBACK');
      const results = await Promise.allSettled([
        ...failed.map((e) => sqlite.publish(e)),
        sqlite.delivered(bob.key, [committed[0]!.id]),
        writer.runAtomic(() => {
          rollback.run();
          throw new Error('disk I/O error');
        }),
      ]);
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof StoreWriteError)).toBe(true);
      expect(await observe(sqlite, parties)).toEqual(await observe(memory, parties));

      // The same operations again, now committed: same answers, seqs and totals as the memory box.
      const again = async (box: BoxStore) => [
        ...(await Promise.all(failed.map((e) => box.publish(e)))),
        await box.delivered(bob.key, [committed[0]!.id]),
      ];
      const answers = await again(sqlite);
      expect(answers).toEqual(await again(memory));
      // The last publish evicted Alice's first event (the weakest, oldest stranger): nothing left to deliver.
      expect(answers).toMatchObject([{ status: 'stored' }, { status: 'stored' }, { status: 'stored', evicted: 1 }, 0]);
      expect(await observe(sqlite, parties)).toEqual(await observe(memory, parties));
    } finally {
      await writer.close();
      db.close();
    }
  });
});
