import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from '@wmp/jcs-signing';
import { MlsGroup } from '@wmp/mls-bridge';
import { type Peer, WmpSession } from '@wmp/session';
import { afterAll, describe, expect, it } from 'vitest';
import { createRelay, type Relay, type RelayConfig } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import {
  CLIENT_CAPABILITIES,
  type Client,
  codeOf,
  connectPeer,
  openClient,
  waitFor,
} from './fixtures/relay-clients.js';
import { Member } from './fixtures/relay-mls-members.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-mls-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a relay restarted on the same SQLite file (MLS)', () => {
  it('keeps the group epoch (commit ordering) and the key packages', async () => {
    const config: RelayConfig = {
      identity: { seed: randomBytes(32) },
      store: (limits) => SqliteStore.open({ path: join(dir, 'relay.db'), ...limits }),
    };
    let relay: Relay = createRelay(config);
    let { url } = await relay.listen();
    const clients: Client[] = [];
    const peers: Peer[] = [];
    try {
      const open = async () => {
        const c = await openClient(url, { register: false });
        clients.push(c);
        return Member.create(c);
      };
      const alice = await open();
      const bob = await open();
      await bob.publishKeyPackages(2);
      const group = await WmpSession.open(alice.peer, {
        signer: alice.keypair,
        participants: [bob.did],
        capabilities: CLIENT_CAPABILITIES,
        security: { mode: 'mls', cipher_suites: [1] },
      });
      alice.sessionId = group.id;
      await bob.joinSession(group.id);
      alice.group = await MlsGroup.create(alice.mls);
      const add = await alice.group.add(await alice.fetchKeyPackage(bob.did));
      await alice.group.confirmCommit();
      await alice.request('wmp.mls.group.create', {
        group_id: alice.group.groupId,
        cipher_suite: 1,
        group_info: await alice.group.groupInfo(),
        welcomes: { [bob.did]: add.welcome },
      });
      await waitFor(() => bob.group?.epoch === 1);

      // A commit Bob made in epoch 1 but did not send (on a copy), then Alice's wins epoch 1.
      const stale = await (await MlsGroup.restore(bob.group!.save(), bob.mls)).update();
      let aliceCommit = '';
      expect(
        await alice.commit('update', async (g) => {
          const c = await g.update();
          aliceCommit = c.commit;
          return c;
        }),
      ).toEqual({ epoch: 2 });
      await waitFor(() => bob.group?.epoch === 2);
      await bob.settled();

      await relay.close();
      relay = createRelay(config);
      ({ url } = await relay.listen());

      // Both resume on the new process (sessions are persisted too).
      const alicePeer = await connectPeer(url);
      const bobPeer = await connectPeer(url);
      peers.push(alicePeer, bobPeer);
      await alice.client.session.resume(alicePeer);
      await group.resume(alicePeer);
      alice.listen(alicePeer);
      await bob.restart(bobPeer, bob.group!.save());

      // The epoch survived: the stale commit still loses, Alice's is still recognised as the winner.
      await expect(bob.request('wmp.mls.group.update', { commit: stale.commit })).rejects.toMatchObject({
        code: -31004,
        data: { reason: 'epoch_conflict', epoch: 2 },
      });
      expect(await alice.request('wmp.mls.group.update', { commit: aliceCommit })).toMatchObject({ epoch: 2 });
      expect(await bob.commit('update', (g) => g.update())).toEqual({ epoch: 3 });
      await waitFor(() => alice.group?.epoch === 3);
      await bob.send('after the restart');
      await waitFor(() => alice.read.length === 1);
      expect(alice.read[0]).toMatchObject({ body: 'after the restart', sender: bob.did, epoch: 3 });

      // Key packages: the one taken before the restart is gone, the other is still there, once.
      await expect(
        alice.client.session.request('ohan.mls.keypackage.fetch', { identity: bob.did }),
      ).resolves.toMatchObject({ identity: bob.did, cipher_suite: 1, key_package: bob.published[1] });
      expect(await codeOf(alice.client.session.request('ohan.mls.keypackage.fetch', { identity: bob.did }))).toBe(
        -31008,
      );
      expect(alice.failures).toEqual([]);
      expect(bob.failures).toEqual([]);
    } finally {
      for (const p of [...clients.map((c) => c.peer), ...peers]) await p.close().catch(() => undefined);
      await relay.close();
    }
  });
});
