import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type OhanEvent, type StoredEvent, signRequest } from '@wmp/ohan-seal';
import { afterAll, describe, expect, it } from 'vitest';
import { BOX_API_PREFIX } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { event, party } from '../src/storage/testing/events.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-box-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/box-api-crash-box.ts', import.meta.url));

/** Starts the box child on `file`; resolves with it and its origin once it listens. */
function startChild(file: string): Promise<{ child: ChildProcessWithoutNullStreams; origin: string }> {
  const child = spawn(process.execPath, ['--conditions=@wmp/source', '--import', 'tsx', script, file], {
    cwd: root,
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ child, origin: line });
    });
    child.on('exit', (code) => reject(new Error(`box exited (${code}): ${stderr}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

describe('box crash safety (SQLite, child process)', () => {
  it('after SIGKILL mid-stream, every event answered 202 is fetchable and the totals match', async () => {
    const file = join(dir, 'box.db');
    const [alice, bob] = [party(), party()];
    const events: OhanEvent[] = [];
    for (let i = 0; i < 700; i++) events.push(await event(alice, bob));

    const first = await startChild(file);
    // Bob's allow list through the API, so the events take the contact lane.
    const allowPath = `${BOX_API_PREFIX}/allow`;
    const allowBody = JSON.stringify({ contacts: [alice.key] });
    const allowAuth = await signRequest({
      signer: bob.signer,
      origin: first.origin,
      method: 'PUT',
      target: allowPath,
      body: allowBody,
    });
    expect(
      (await fetch(first.origin + allowPath, { method: 'PUT', body: allowBody, headers: { authorization: allowAuth } }))
        .status,
    ).toBe(200);

    // 32 publishes in flight at all times; killed once 300 have been answered 202.
    const accepted: string[] = [];
    let next = 0;
    let killed = false;
    const publishOne = async (): Promise<void> => {
      while (next < events.length && !killed) {
        const e = events[next++]!;
        try {
          const r = await fetch(`${first.origin}${BOX_API_PREFIX}/events`, { method: 'POST', body: JSON.stringify(e) });
          if (r.status === 202) accepted.push(e.id);
          else if (!killed) throw new Error(`publish answered ${r.status}`);
        } catch (error) {
          if (!killed) throw error;
        }
        if (accepted.length >= 300 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 32 }, publishOne));
    await exited(first.child);
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(accepted.length).toBeGreaterThanOrEqual(300);

    const second = await startChild(file);
    const served: StoredEvent[] = [];
    let after = 0;
    for (;;) {
      const target = `${BOX_API_PREFIX}/events?after=${after}&limit=500`;
      const authorization = await signRequest({ signer: bob.signer, origin: second.origin, method: 'GET', target });
      const page = (await (await fetch(second.origin + target, { headers: { authorization } })).json()) as {
        events: StoredEvent[];
        next: number;
        more: boolean;
      };
      served.push(...page.events);
      after = page.next;
      if (!page.more) break;
    }
    second.child.kill('SIGTERM');
    await exited(second.child);

    const ids = new Set(served.map((e) => e.id));
    for (const id of accepted) expect(ids.has(id), id).toBe(true);
    const seqs = served.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));

    const store = SqliteStore.open({ path: file, box: { directory: false } });
    try {
      const bytes = served.reduce((sum, { seq: _seq, ...e }) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
      expect(await store.box.totals()).toEqual({ count: served.length, bytes });
      expect(await store.box.recipientStats(bob.key)).toEqual({ count: served.length, bytes });
      expect(await store.box.senderStats(alice.key)).toEqual({ count: served.length, bytes });
    } finally {
      await store.close();
    }
  }, 30_000);
});
