import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StoreWriteError } from '../src/node.js';
import { type DurableSync, WalFileSync, WriteQueue } from '../src/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-write-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

/** A sync the test finishes by hand: `calls` holds one callback per `after`. */
function manualSync() {
  const calls: Array<(error: Error | null) => void> = [];
  let closed = 0;
  const sync: DurableSync = {
    after: (done) => calls.push(done),
    close: () => void closed++,
  };
  return { sync, calls, closed: () => closed };
}

/** A WAL database left to its caller's fsync, with a second connection that sees what is committed. */
function setup(sync: DurableSync) {
  const file = join(dir, `ws-${++files}.db`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  const reader = new Database(file, { readonly: true });
  open.push(db, reader);
  const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  const count = reader.prepare<[], number>('SELECT count(*) FROM t').pluck();
  return { file, writer: new WriteQueue(db, { sync }), insert, count };
}

/** Lets the writer's setImmediate flush run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WriteQueue with a sync after COMMIT', () => {
  it('settles callers only once the sync after their COMMIT called back', async () => {
    const { sync, calls } = manualSync();
    const { writer, insert, count } = setup(sync);
    let settled = false;
    const write = writer
      .run(() => insert.run('a', 1).changes)
      .then((changes) => {
        settled = true;
        return changes;
      });
    await turn();
    expect([count.get(), calls.length]).toEqual([1, 1]); // committed, waiting for its fsync
    await turn();
    expect(settled).toBe(false);
    calls[0]!(null);
    expect(await write).toBe(1);
    expect(writer.stats).toMatchObject({ transactions: 1, synced: 1 });
  });

  it('writes the next batch while a sync runs, and settles each batch after its own sync', async () => {
    const { sync, calls } = manualSync();
    const { writer, insert, count } = setup(sync);
    const order: string[] = [];
    const first = writer.run(() => insert.run('a', 1)).then(() => order.push('a'));
    await turn();
    const second = writer.run(() => insert.run('b', 2)).then(() => order.push('b'));
    await turn();
    expect([count.get(), calls.length, order]).toEqual([2, 2, []]);
    calls[0]!(null);
    await first;
    expect(order).toEqual(['a']);
    calls[1]!(null);
    await second;
    expect(order).toEqual(['a', 'b']);
  });

  it('after a failed sync rejects its callers and every later write with StoreWriteError', async () => {
    const { sync, calls } = manualSync();
    const { writer, insert } = setup(sync);
    const first = writer.run(() => insert.run('a', 1));
    await turn();
    const second = writer.run(() => insert.run('b', 2));
    await turn();
    calls[0]!(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    // A later fsync that succeeds proves nothing once one failed (the kernel may have dropped pages).
    calls[1]!(null);
    await expect(first).rejects.toBeInstanceOf(StoreWriteError);
    await expect(second).rejects.toMatchObject({ code: 'ERR_STORE_WRITE' });
    await expect(writer.run(() => insert.run('c', 3))).rejects.toBeInstanceOf(StoreWriteError);
    await writer.drain();
    expect(writer.stats.synced).toBe(0);
  });

  it('drain and close wait for the sync; close then closes it', async () => {
    const { sync, calls, closed } = manualSync();
    const { writer, insert } = setup(sync);
    void writer.run(() => insert.run('a', 1));
    let drained = false;
    const closing = writer.close().then(() => {
      drained = true;
    });
    await turn();
    await turn();
    expect([drained, calls.length, closed()]).toEqual([false, 1, 0]);
    calls[0]!(null);
    await closing;
    expect(closed()).toBe(1);
  });
});

describe('WalFileSync', () => {
  it('fsyncs the WAL file for every caller, in order, including those arriving during an fsync', async () => {
    const { file, writer, insert } = setup({ after: (done) => done(null), close: () => {} });
    await writer.run(() => insert.run('a', 1)); // SQLite creates the WAL file
    const wal = new WalFileSync(`${file}-wal`);
    const heard: number[] = [];
    await new Promise<void>((resolve) => {
      wal.after(() => {
        heard.push(1);
        wal.after(() => {
          heard.push(3);
          resolve();
        });
      });
      wal.after((error) => heard.push(error === null ? 2 : -2));
    });
    expect(heard).toEqual([1, 2, 3]);
    wal.close();
  });

  it('passes the error on when the WAL file cannot be opened', async () => {
    const wal = new WalFileSync(join(dir, 'missing.db-wal'));
    const error = await new Promise<Error | null>((resolve) => wal.after(resolve));
    expect(error).toMatchObject({ code: 'ENOENT' });
    wal.close();
  });
});
