import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, verifyRelayChain } from '@wmp/jcs-signing';
import { afterAll, describe, expect, it } from 'vitest';
import { createRelay, type RelayConfig } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { asMessage, type Client, connectPeer, disconnect, openClient, waitFor } from './fixtures/relay-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a relay restarted on the same SQLite file', () => {
  it('loses nothing it acknowledged, and clients resume their sessions', async () => {
    const path = join(dir, 'relay.db');
    const config: RelayConfig = {
      identity: { seed: randomBytes(32) },
      store: (limits) => SqliteStore.open({ path, ...limits }),
    };
    let relay = createRelay(config);
    let { url } = await relay.listen();
    const clients: Client[] = [];
    try {
      const alice = await openClient(url);
      const bob = await openClient(url);
      clients.push(alice, bob);
      await disconnect(relay, bob);
      const ids: string[] = [];
      for (const n of [1, 2, 3]) ids.push(((await alice.session.send([bob.keypair.did], { n })) as any).message_id);
      await waitFor(() => alice.statuses.length === 3);

      await relay.close();
      relay = createRelay(config);
      ({ url } = await relay.listen());

      // Both resume on the new process; the registrations were persisted with the sessions.
      await alice.session.resume(await connectPeer(url));
      expect(await bob.session.resume(await connectPeer(url))).toBe(3);
      await waitFor(() => bob.inbox.length === 3);
      expect(bob.inbox.map((m) => m.wmp.message_id)).toEqual(ids);
      for (const m of bob.inbox)
        await expect(verifyRelayChain(asMessage(m), { lastRelayId: relay.id, allowUnsigned: true })).resolves.toBe(1);

      await bob.session.notify('wmp.message.ack', { message_ids: ids, status: 'processed' });
      await waitFor(() => alice.statuses.filter((s) => s.status === 'delivered').length === 3);
      const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ status: 'ok', store: 'ok' });
    } finally {
      for (const c of clients) await c.session.peer.close().catch(() => undefined);
      await relay.close();
    }
    // After the acks, nothing is left in the file.
    const store = SqliteStore.open({ path });
    expect(await store.queue.totals()).toEqual({ count: 0, bytes: 0 });
    await store.close();
  });
});
