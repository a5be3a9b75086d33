import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from '@wmp/jcs-signing';
import { afterAll, describe, expect, it } from 'vitest';
import { openRoutedSession } from '../../../test-support/routed-parties.js';
import { createRelay, type RelayConfig } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { type Client, connectPeer, openClient, waitFor } from './fixtures/relay-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-routed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a routed session and a restart of the relay (SQLite)', () => {
  it('survives: both parties resume their hop sessions and the route still passes frames, with no new create', async () => {
    const config: RelayConfig = {
      identity: { seed: randomBytes(32) },
      store: (limits) => SqliteStore.open({ path: join(dir, 'relay.db'), ...limits }),
    };
    let relay = createRelay(config);
    let { url } = await relay.listen();
    const clients: Client[] = [];
    try {
      const alice = await openClient(url);
      const bob = await openClient(url);
      clients.push(alice, bob);
      const { bridge, received, session } = await openRoutedSession(alice, bob);
      await expect(session.request('org.example.ping', { text: 'before' })).resolves.toMatchObject({ pong: 'before' });

      await relay.close();
      relay = createRelay(config);
      ({ url } = await relay.listen());

      const bobPeer = await connectPeer(url);
      await bob.session.resume(bobPeer);
      bridge.attach(bobPeer);
      const alicePeer = await connectPeer(url);
      await alice.session.resume(alicePeer);
      session.attach(alicePeer);

      await expect(session.request('org.example.ping', { text: 'after' })).resolves.toMatchObject({ pong: 'after' });
      await session.send([bob.keypair.did], { text: 'after the restart' });
      await waitFor(() => received.length === 1);
      expect(received[0]).toMatchObject({ body: { text: 'after the restart' } });
    } finally {
      for (const c of clients) await c.session.peer.close().catch(() => undefined);
      await relay.close();
    }
  });
});
