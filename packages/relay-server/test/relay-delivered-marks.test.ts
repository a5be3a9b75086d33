import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from '@wmp/jcs-signing';
import { afterAll, describe, expect, it } from 'vitest';
import { createRelay, type Relay, type RelayConfig } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { type Client, connectPeer, disconnect, openClient, waitFor } from './fixtures/relay-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-marks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A relay on a SQLite file whose marks wait longer than any test: only an ack, a resume or a stop makes them. */
async function startRelay(name: string): Promise<{ relay: Relay; url: string; path: string; clients: Client[] }> {
  const path = join(dir, name);
  const config: RelayConfig = {
    identity: { seed: randomBytes(32) },
    store: (limits) => SqliteStore.open({ path, ...limits }),
    timings: { deliveredMarkDelayMs: 600_000 },
  };
  const relay = createRelay(config);
  const { url } = await relay.listen();
  return { relay, url, path, clients: [] };
}

async function stop(r: { relay: Relay; clients: Client[] }): Promise<void> {
  for (const c of r.clients) await c.session.peer.close().catch(() => undefined);
  await r.relay.close();
}

const statusesOf = (c: Client, id: string) => c.statuses.filter((s) => s.message_id === id).map((s) => s.status);

describe('delivered marks (decision 0730)', () => {
  it('writes no mark for a message acknowledged before its mark: delivered once, from the ack', async () => {
    const r = await startRelay('acked.db');
    const stores = r.relay.stores as SqliteStore;
    try {
      const alice = await openClient(r.url);
      const bob = await openClient(r.url);
      r.clients.push(alice, bob);
      const before = stores.writeStats.operations;
      const id = ((await alice.session.send([bob.keypair.did], 'acked at once')) as any).message_id as string;
      await waitFor(() => bob.inbox.length === 1);
      await bob.session.notify('wmp.message.ack', { message_ids: [id], status: 'received' });
      await waitFor(() => statusesOf(alice, id).length === 1);
      expect(statusesOf(alice, id)).toEqual(['delivered']);
      // Its append and its ack; no UPDATE marking it.
      expect(stores.writeStats.operations - before).toBe(2);
    } finally {
      await stop(r);
    }
  });

  it('marks what was written and not acknowledged when the relay stops, before its store closes', async () => {
    const r = await startRelay('stopped.db');
    let bobKey: string;
    try {
      const alice = await openClient(r.url);
      const bob = await openClient(r.url);
      r.clients.push(alice, bob);
      bobKey = bob.keypair.did;
      await alice.session.send([bob.keypair.did], 'written, never acked');
      await waitFor(() => bob.inbox.length === 1);
    } finally {
      await stop(r);
    }
    const store = SqliteStore.open({ path: r.path });
    try {
      const page = await store.queue.after(bobKey, 0, 10);
      expect(page.messages.map((m) => m.delivered)).toEqual([true]);
    } finally {
      await store.close();
    }
  });

  it('marks what was written before counting what a resumed recipient missed', async () => {
    const r = await startRelay('resumed.db');
    try {
      const alice = await openClient(r.url);
      const bob = await openClient(r.url);
      r.clients.push(alice, bob);
      const id = ((await alice.session.send([bob.keypair.did], 'had it')) as any).message_id as string;
      await waitFor(() => bob.inbox.length === 1);
      bob.session.lastReceivedId = undefined; // it acknowledges nothing on resume either
      await disconnect(r.relay, bob);
      // It had the message: nothing missed, and its sender hears `delivered` (from the mark) once.
      expect(await bob.session.resume(await connectPeer(r.url))).toBe(0);
      await waitFor(() => statusesOf(alice, id).length === 1);
      expect(statusesOf(alice, id)).toEqual(['delivered']);
    } finally {
      await stop(r);
    }
  });
});
