import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreLockedError } from '../src/node.js';
import { openDatabase, SqliteStore, WalCheckpointer } from '../src/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const path = () => join(dir, `relay-${++files}.db`);

describe('checkpoints on a worker thread', () => {
  it('leaves the writer connection without automatic checkpoints only when asked to', () => {
    const background = openDatabase(path(), { backgroundCheckpoint: true });
    expect(background.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    background.close();
    const automatic = openDatabase(path());
    expect(automatic.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    automatic.close();
    expect(() => openDatabase(path(), { exclusive: true, backgroundCheckpoint: true })).toThrow(RangeError);
  });

  it("copies the store's committed pages into the database file from the worker", async () => {
    const file = path();
    const big = {
      maxQueued: 1e6,
      maxBytes: 2 ** 30,
      maxQueuedPerSender: 1e6,
      maxBytesPerSender: 2 ** 30,
      maxTotalBytes: 2 ** 30,
    };
    const store = SqliteStore.open({ path: file, queue: big });
    const body = JSON.stringify({ text: 'x'.repeat(3000) });
    for (let round = 0; round < 15; round++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          store.queue.append(
            'did:key:bob',
            { id: `m${round}-${i}`, sender: 'did:key:alice', body },
            { expiresAt: Date.now() + 60_000 },
          ),
        ),
      );
    }
    // ~4.5 MB committed: without a checkpoint it all stays in the WAL and the database file small.
    await expect.poll(() => statSync(file).size, { timeout: 20_000 }).toBeGreaterThan(3_000_000);
    // The worker answers once its checkpoint is done, a moment after the pages reached the file.
    await expect.poll(() => store.checkpointStats!.checkpoints).toBeGreaterThan(0);
    expect(store.checkpointStats).toMatchObject({ failed: false });
    await store.close();
    const reopened = SqliteStore.open({ path: file, queue: big });
    expect((await reopened.queue.totals()).count).toBe(1500);
    await reopened.close();
  }, 60_000);

  it('gives checkpointing back to the writer connection when the worker fails', async () => {
    let failed = 0;
    const checkpointer = new WalCheckpointer(path(), () => failed++, "throw new Error('no worker');");
    await expect.poll(() => failed).toBe(1);
    expect(checkpointer.stats).toEqual({ checkpoints: 0, failed: true });
    checkpointer.committed(); // nothing to do any more, and no throw
    await checkpointer.close();
  });

  it('holds an exclusive store for its process with a lock file beside it', async () => {
    const file = path();
    const first = SqliteStore.open({ path: file, exclusive: true });
    expect(() => SqliteStore.open({ path: file, exclusive: true })).toThrow(StoreLockedError);
    await first.close();
    const again = SqliteStore.open({ path: file, exclusive: true });
    await again.close();
  });
});
