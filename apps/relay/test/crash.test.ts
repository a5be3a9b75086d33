// Crash safety (issue 5, docs/architecture.md, "Storage"): the relay on SQLite is killed with
// SIGKILL while a client streams deliver requests to an offline recipient; after a restart on the
// same data directory the recipient resumes and gets every message the relay acknowledged, once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Client,
  connectPeer,
  disconnect,
  metric,
  openClient,
  type RelayProcess,
  startRelayProcess,
  waitFor,
} from './fixtures/relay-process.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-crash-'));
const processes: RelayProcess[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.peer.close().catch(() => undefined);
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

// Rate limits up: the stream is far faster than the default 200 requests/s of one identity.
const ARGS = ['--data-dir', dir, '--port', '0', '--log-level', 'warn', '--rate', '1000000', '--rate-burst', '1000000'];
const KILL_AFTER = 150;
const IN_FLIGHT = 16;

async function start(): Promise<RelayProcess> {
  const p = await startRelayProcess(ARGS, { how: 'node' });
  processes.push(p);
  return p;
}

describe('SIGKILL mid-stream, restart on the same data directory', () => {
  it('delivers every acknowledged message after resume, exactly once', async () => {
    const first = await start();
    const relayId = ((await (await fetch(`${first.url}/health`)).json()) as { relay_id: string }).relay_id;
    const alice = await openClient(first.url);
    const bob = await openClient(first.url);
    clients.push(alice, bob);
    await disconnect(first.url, bob.peer); // registered, then offline: everything is queued for Bob

    // n -> the message id of every deliver the relay answered.
    const acked = new Map<number, string>();
    let sent = 0;
    let killed = false;
    const worker = async () => {
      while (!killed || acked.size < KILL_AFTER) {
        if (killed) return;
        const n = ++sent;
        try {
          const r = (await alice.session.send([bob.keypair.did], { n })) as { message_id: string };
          acked.set(n, r.message_id);
        } catch {
          return; // the relay is gone: this one was not acknowledged
        }
        if (acked.size >= KILL_AFTER && !killed) {
          killed = true;
          // One more on its way as the relay dies: the others may all have been answered in the
          // same group commit, and the test is about what was in flight too.
          const last = ++sent;
          alice.session.send([bob.keypair.did], { n: last }).then(
            (r) => acked.set(last, (r as { message_id: string }).message_id),
            () => undefined,
          );
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acked.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(sent).toBeGreaterThan(acked.size); // requests were in flight when it died
    await alice.peer.close().catch(() => undefined);

    const second = await start();
    const health = (await (await fetch(`${second.url}/health`)).json()) as { relay_id: string };
    expect(health.relay_id).toBe(relayId); // the key persisted in the data directory

    // Bob resumes his session (persisted in SQLite) on the new process: the queue is replayed.
    const missed = await bob.session.resume(await connectPeer(second.url));
    expect(missed).toBeGreaterThanOrEqual(acked.size);
    await waitFor(() => bob.inbox.length >= missed, 15_000);
    // A message sent now is the marker: it is queued after the replay, so a duplicate from the
    // replay would have come before it.
    const carol = await openClient(second.url);
    clients.push(carol);
    await carol.session.send([bob.keypair.did], { n: 'marker' });
    await waitFor(() => bob.inbox.some((m) => m.wmp.sender === carol.keypair.did), 15_000);
    const replayed = bob.inbox.filter((m) => m.wmp.sender !== carol.keypair.did);
    expect(bob.inbox.at(-1)!.wmp.sender).toBe(carol.keypair.did);

    const received = replayed.map((m) => ({ n: (m.body as { n: number }).n, id: m.wmp.message_id as string }));
    const ids = received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length); // once: no message id twice
    expect(received).toHaveLength(missed);
    const byN = new Map(received.map((r) => [r.n, r.id]));
    expect(byN.size).toBe(received.length);
    // Nothing acknowledged is missing, under the id the relay acknowledged it with.
    for (const [n, id] of acked) expect(byN.get(n)).toBe(id);
    // Anything more is a message that was committed but whose answer the kill cut off.
    for (const { n } of received) {
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(sent);
    }
    expect(received.length - acked.size).toBeLessThanOrEqual(IN_FLIGHT);
    console.log(`crash: sent ${sent}, acknowledged ${acked.size}, delivered after restart ${received.length}`);
    // In the order they were sent (one connection, appended in arrival order).
    const order = received.map((r) => r.n);
    expect(order).toEqual([...order].sort((x, y) => x - y));

    // Bob acknowledges: his queue empties. What is left is the sender's `delivered` status of each
    // replayed message, kept for her (she asked for statuses, and is away), one each; a graceful
    // stop exits 0.
    const marker = bob.inbox.at(-1)!.wmp.message_id as string;
    await bob.session.notify('wmp.message.ack', { message_ids: [...ids, marker], status: 'received' });
    await expect
      .poll(() => metric(second.url, 'wmp_relay_queued_messages'), { timeout: 5000, interval: 20 })
      .toBe(received.length);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});
