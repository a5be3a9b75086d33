import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../test-support/services/index.js';
import { StoreUnavailableError, StoreWriteError } from '../src/index.js';
import { PostgresStore } from '../src/postgres.js';

// PostgreSQL crashing under a node (`pg_ctl stop -m immediate`: no checkpoint, WAL recovery at
// the next start) on a server of this file's own: nothing acknowledged is lost, writes fail with
// typed errors while it is down, and the same store works again once it is back, without reopening.
const HOUR = 3600_000;
const RECIPIENTS = Array.from({ length: 8 }, (_, i) => `did:key:z6MkR${i}`);

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres({ name: 'store-crash' });
}, 60_000);
afterAll(() => server?.destroy());

describe('PostgresStore across a PostgreSQL crash', () => {
  it('keeps every acknowledged append, fails while down with typed errors, recovers by itself', async () => {
    const url = await server.createDatabase('crash');
    const store = await PostgresStore.open({ url, poolSize: 2, connectTimeoutMs: 2000 });
    try {
      const acked = new Map<string, { recipient: string; seq: number }>();
      const failed: unknown[] = [];
      let n = 0;
      let stop = false;
      // Appends keep coming from 40 callers; each records what it was told.
      const load = Array.from({ length: 40 }, async () => {
        while (!stop) {
          const id = `m-${++n}`;
          const recipient = RECIPIENTS[n % RECIPIENTS.length]!;
          try {
            const r = await store.queue.append(
              recipient,
              { id, sender: 'did:key:z6MkS', body: `{"n":${n}}` },
              {
                expiresAt: Date.now() + HOUR,
              },
            );
            acked.set(id, { recipient, seq: r.seq });
          } catch (error) {
            failed.push(error);
            return;
          }
        }
      });
      await expect.poll(() => acked.size, { timeout: 30_000 }).toBeGreaterThan(500);
      await server.stop({ mode: 'immediate' });
      await Promise.all(load);
      stop = true;
      // Every caller that was in flight was told the write failed, as a StoreWriteError.
      expect(failed.length).toBeGreaterThan(0);
      for (const error of failed) expect(error).toBeInstanceOf(StoreWriteError);

      // While it is down: writes and reads fail at once, typed.
      await expect(
        store.queue.append(
          RECIPIENTS[0]!,
          { id: 'down', sender: 'did:key:z6MkS', body: '{}' },
          { expiresAt: Date.now() + HOUR },
        ),
      ).rejects.toBeInstanceOf(StoreWriteError);
      await expect(store.queue.stats(RECIPIENTS[0]!)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.sessions.get('ses-x')).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });

      await server.start();

      // Everything acknowledged is there, at the seq it was given.
      const stored = new Map<string, { recipient: string; seq: number }>();
      for (const recipient of RECIPIENTS) {
        let cursor = 0;
        for (;;) {
          const page = await store.queue.after(recipient, cursor, 500);
          for (const m of page.messages) stored.set(m.id, { recipient, seq: m.seq });
          cursor = page.next;
          if (!page.more) break;
        }
      }
      for (const [id, where] of acked) expect(stored.get(id)).toEqual(where);
      // Seqs stay gap-free per recipient (what was in flight either committed whole or not at all).
      for (const recipient of RECIPIENTS) {
        const seqs = [...stored.values()].filter((m) => m.recipient === recipient).map((m) => m.seq);
        expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
        expect(await store.queue.stats(recipient)).toMatchObject({ count: seqs.length });
      }

      // The same store writes again (a new writer connection); seqs go on, never reused.
      const after = await store.queue.append(
        RECIPIENTS[1]!,
        { id: 'after', sender: 'did:key:z6MkS', body: '{}' },
        { expiresAt: Date.now() + HOUR },
      );
      const before = [...stored.values()].filter((m) => m.recipient === RECIPIENTS[1]).length;
      expect(after).toEqual({ status: 'queued', seq: before + 1 });
      expect((await store.queue.totals()).count).toBe(stored.size + 1);
    } finally {
      await store.close();
    }
  }, 120_000);
});
