import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StoreClosedError, StoreWriteError } from '../src/node.js';
import { WriteQueue } from '../src/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-write-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

/** A WAL database with one table, its writer, and a second connection that sees only what is committed. */
function setup(options: { maxBatch?: number } = {}) {
  const file = join(dir, `wq-${++files}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
    CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);`);
  db.pragma('foreign_keys = ON');
  const reader = new Database(file, { readonly: true });
  open.push(db, reader);
  const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  const committed = reader.prepare<[string], number>('SELECT v FROM t WHERE k = ?').pluck();
  const count = reader.prepare<[], number>('SELECT count(*) FROM t').pluck();
  return { db, writer: new WriteQueue(db, options), insert, committed, count };
}

describe('WriteQueue (group commit)', () => {
  it('commits 100 concurrent writes in one transaction, and resolves each only after COMMIT', async () => {
    const { writer, insert, committed, count } = setup();
    const visibleWhenResolved: boolean[] = [];
    const writes = Array.from({ length: 100 }, (_, i) =>
      writer
        .run(() => insert.run(`k${i}`, i).changes)
        // Another connection sees only committed data: the row must be there when the caller hears back.
        .then((changes) => visibleWhenResolved.push(changes === 1 && committed.get(`k${i}`) === i)),
    );
    expect(writer.pending).toBe(100);
    expect(count.get()).toBe(0);
    await Promise.all(writes);
    expect(visibleWhenResolved).toEqual(Array(100).fill(true));
    expect(writer.stats).toEqual({ transactions: 1, operations: 100, failures: 0, synced: 0 });
  });

  it('never puts more than maxBatch (default 100) operations in one transaction', async () => {
    const { writer, insert } = setup();
    await Promise.all(Array.from({ length: 250 }, (_, i) => writer.run(() => insert.run(`k${i}`, i))));
    expect(writer.stats).toEqual({ transactions: 3, operations: 250, failures: 0, synced: 0 });

    const small = setup({ maxBatch: 10 });
    await Promise.all(Array.from({ length: 25 }, (_, i) => small.writer.run(() => small.insert.run(`k${i}`, i))));
    expect(small.writer.stats.transactions).toBe(3);
    expect(() => new WriteQueue(small.db, { maxBatch: 101 })).toThrow(RangeError);
    expect(() => new WriteQueue(small.db, { maxBatch: 0 })).toThrow(RangeError);
  });

  it('runs operations in the order they were queued', async () => {
    const { writer } = setup();
    const order: number[] = [];
    await Promise.all(Array.from({ length: 150 }, (_, i) => writer.run(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('rolls back only the operation that threw; the rest of its batch commits', async () => {
    const { writer, insert, committed } = setup();
    const failure = new Error('refused');
    const results = await Promise.allSettled([
      writer.run(() => insert.run('a', 1)),
      writer.run(() => {
        insert.run('b', 2);
        throw failure;
      }),
      writer.run(() => insert.run('a', 3)), // a constraint error: rejected with the driver's error
      writer.run(() => insert.run('c', 4)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBe(failure);
    expect([committed.get('a'), committed.get('b'), committed.get('c')]).toEqual([1, undefined, 4]);
    expect(writer.stats).toMatchObject({ transactions: 1, operations: 4 });
  });

  it('rolls back an operation whose result `keep` refuses, and still resolves with the result', async () => {
    const { writer, insert, committed } = setup();
    const refused = await writer.run(
      () => {
        insert.run('x', 1);
        return 'refused' as const;
      },
      (r) => r !== 'refused',
    );
    expect(refused).toBe('refused');
    expect(committed.get('x')).toBeUndefined();
  });

  it('rejects every caller of a batch whose COMMIT fails, keeps none of it, and goes on', async () => {
    const { writer, insert, db, count } = setup();
    // The deferred foreign key is checked at COMMIT: the whole transaction fails there.
    const orphan = db.prepare('INSERT INTO child (pid) VALUES (99)');
    const results = await Promise.allSettled([
      writer.run(() => insert.run('a', 1)),
      writer.run(() => orphan.run()),
      writer.run(() => insert.run('b', 2)),
    ]);
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof StoreWriteError)).toBe(true);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_STORE_WRITE' });
    expect(count.get()).toBe(0);
    expect(db.inTransaction).toBe(false);
    expect(writer.stats).toEqual({ transactions: 0, operations: 0, failures: 1, synced: 0 });
    await writer.run(() => insert.run('c', 3));
    expect(count.get()).toBe(1);
  });

  it('runs atomic operations without a savepoint in the same batches, in order; one that throws is rejected alone', async () => {
    const { writer, insert, committed } = setup();
    const order: string[] = [];
    const results = await Promise.allSettled([
      writer.run(() => order.push('a') && insert.run('a', 1)),
      writer.runAtomic(() => order.push('b') && insert.run('b', 2).changes),
      writer.runAtomic(() => {
        order.push('c');
        throw new Error('refused before writing');
      }),
      writer.runAtomic(() => order.push('d') && insert.run('d', 4).changes),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect([committed.get('a'), committed.get('b'), committed.get('d')]).toEqual([1, 2, 4]);
    expect(writer.stats).toEqual({ transactions: 1, operations: 4, failures: 0, synced: 0 });
  });

  it('calls before-commit listeners once per transaction, inside it, before COMMIT', async () => {
    const { writer, insert, committed } = setup();
    let batches = 0;
    writer.onBeforeCommit(() => {
      batches++;
      insert.run(`batch${batches}`, batches);
    });
    await Promise.all(Array.from({ length: 150 }, (_, i) => writer.run(() => insert.run(`k${i}`, i))));
    expect(batches).toBe(2);
    expect([committed.get('batch1'), committed.get('batch2')]).toEqual([1, 2]);
  });

  it('a listener that throws fails the whole transaction; rollback listeners hear of every failed one', async () => {
    const { writer, insert, count, db } = setup();
    let fail = true;
    let rollbacks = 0;
    writer.onBeforeCommit(() => {
      if (fail) throw new Error('cannot write');
    });
    writer.onRollback(() => rollbacks++);
    const first = await Promise.allSettled([writer.run(() => insert.run('a', 1)), writer.runAtomic(() => 2)]);
    expect(first.every((r) => r.status === 'rejected' && r.reason instanceof StoreWriteError)).toBe(true);
    expect([count.get(), rollbacks, db.inTransaction]).toEqual([0, 1, false]);

    // An atomic operation under which SQLite rolled the transaction back fails the batch too.
    fail = false;
    const rollback = db.prepare('ROLLBACK');
    const second = await Promise.allSettled([
      writer.run(() => insert.run('b', 2)),
      writer.runAtomic(() => {
        rollback.run();
        throw new Error('I/O error');
      }),
    ]);
    expect(second.every((r) => r.status === 'rejected' && r.reason instanceof StoreWriteError)).toBe(true);
    expect([count.get(), rollbacks]).toEqual([0, 2]);
    expect(writer.stats).toEqual({ transactions: 0, operations: 0, failures: 2, synced: 0 });
    await writer.run(() => insert.run('c', 3));
    expect([count.get(), rollbacks]).toEqual([1, 2]);
  });

  it('close commits what is queued, then refuses new operations', async () => {
    const { writer, insert, count } = setup();
    const queued = Array.from({ length: 5 }, (_, i) => writer.run(() => insert.run(`k${i}`, i)));
    await writer.close();
    expect(count.get()).toBe(5);
    await Promise.all(queued);
    await expect(writer.run(() => 1)).rejects.toBeInstanceOf(StoreClosedError);
    expect(writer.closed).toBe(true);
    await writer.drain();
  });
});
