import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryQueueStore, type QueueStore, RelayQueueFullError, StoreWriteError } from '../src/node.js';
import { openDatabase, SqliteQueueStore, WriteQueue } from '../src/sqlite.js';

// The SQLite queue keeps its running totals and next seqs in a write-back cache written once per
// transaction. When a transaction fails after queue operations ran in it, none of them may leave a
// trace: not in the tables (SQLite rolls back) and not in the cache (dropped on rollback). The
// memory queue, fed only what committed, is the reference.

const dir = mkdtempSync(join(tmpdir(), 'wmp-queue-rollback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMITS = { maxQueued: 3, maxBytes: 10_000, maxQueuedPerSender: 3 };
const RECIPIENTS = ['did:key:bob', 'did:key:carol'];
const EXPIRES = Date.now() + 3_600_000;

const msg = (id: string) => ({ id, sender: 'did:key:alice', body: `{"n":"${id}"}` });

async function observe(queue: QueueStore) {
  const out = [];
  for (const r of RECIPIENTS) {
    const page = await queue.after(r, undefined, 100);
    out.push({ queue: page.messages.map((m) => [m.seq, m.id]), stats: await queue.stats(r) });
  }
  return { out, totals: await queue.totals() };
}

describe('SQLite queue totals when a transaction rolls back', () => {
  it('leave no trace of the appends and acks of a failed batch; seqs and caps stay exact', async () => {
    const db = openDatabase(join(dir, 'queue.db'));
    const writer = new WriteQueue(db);
    const sqlite = new SqliteQueueStore(db, writer, LIMITS);
    const memory = new MemoryQueueStore(LIMITS);
    try {
      for (const queue of [sqlite, memory]) {
        for (const id of ['a1', 'a2']) await queue.append('did:key:bob', msg(id), { expiresAt: EXPIRES });
        await queue.append('did:key:carol', msg('c1'), { expiresAt: EXPIRES });
      }

      // One batch: appends (one filling Bob's queue), an ack and an ack-through, then an operation
      // under which SQLite rolls the transaction back.
      const rollback = db.prepare('ROLLBACK');
      const results = await Promise.allSettled([
        sqlite.append('did:key:bob', msg('a3'), { expiresAt: EXPIRES }),
        sqlite.append('did:key:carol', msg('c2'), { expiresAt: EXPIRES }),
        sqlite.ack('did:key:bob', ['a1', 'a2']),
        sqlite.ackThrough('did:key:carol', 'c1'),
        writer.runAtomic(() => {
          rollback.run();
          throw new Error('disk I/O error');
        }),
      ]);
      expect(results.every((r) => r.status === 'rejected' && r.reason instanceof StoreWriteError)).toBe(true);
      expect(await observe(sqlite)).toEqual(await observe(memory));

      // The same operations again, now committed: same answers, seqs, caps and totals as memory.
      const again = async (queue: QueueStore) => [
        await queue.append('did:key:bob', msg('a3'), { expiresAt: EXPIRES }),
        await queue.append('did:key:bob', msg('a3'), { expiresAt: EXPIRES }),
        await queue.append('did:key:bob', msg('a4'), { expiresAt: EXPIRES }).catch((e: unknown) => e),
        await queue.append('did:key:carol', msg('c2'), { expiresAt: EXPIRES }),
        await queue.ack('did:key:bob', ['a1', 'a2']),
        await queue.ackThrough('did:key:carol', 'c1'),
        await queue.append('did:key:bob', msg('a4'), { expiresAt: EXPIRES }),
      ];
      const answers = await again(sqlite);
      expect(answers).toEqual(await again(memory));
      expect(answers[1]).toEqual({ status: 'exists', seq: 3 });
      expect(answers[2]).toBeInstanceOf(RelayQueueFullError);
      expect(answers[6]).toEqual({ status: 'queued', seq: 4 });
      expect(await observe(sqlite)).toEqual(await observe(memory));
    } finally {
      await writer.close();
      db.close();
    }
  });
});
