// WmpClient to a recipient at another relay (issue 15): unchanged client code on both sides; the
// relays are peers of each other and route each other's user there (docs/federation-profile.md).
import { verifyRelayChain } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { Identity } from '../src/identity/identity.js';
import type { MessageStatusEvent } from '../src/node.js';
import { clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();

describe('WmpClient across two federated relays', () => {
  it('Alice at relay 1 and Bob at relay 2 exchange messages, each once, and each hears `delivered` once', async () => {
    const [aliceIdentity, bobIdentity] = [Identity.generate(), Identity.generate()];
    const [p1, p2] = [await freePort(), await freePort()];
    const [u1, u2] = [`http://127.0.0.1:${p1}`, `http://127.0.0.1:${p2}`];
    const federation = (peer: string, remote: string) => ({
      federation: {
        peers: [peer],
        routes: [{ pattern: remote, url: peer }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    });
    const relay1 = await bed.relay({ port: p1, config: federation(u2, bobIdentity.did) });
    const relay2 = await bed.relay({ port: p2, config: federation(u1, aliceIdentity.did) });

    const alice = await bed.client(u1, { identity: aliceIdentity });
    const bob = await bed.client(u2, { identity: bobIdentity, binding: 'http' });
    const statuses = { alice: [] as MessageStatusEvent[], bob: [] as MessageStatusEvent[] };
    alice.client.on('status', (s) => {
      statuses.alice.push(s);
    });
    bob.client.on('status', (s) => {
      statuses.bob.push(s);
    });

    const sent = await alice.client.send(bobIdentity.did, { text: 'hi bob' });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({
      via: 'relay',
      id: sent.messageId,
      from: aliceIdentity.did,
      body: { text: 'hi bob' },
    });
    // Relay 1's entry (signed: it left for relay 2), then relay 2's (unsigned: Bob is on his own
    // connection to it): the chain verifies, and so does every signed hop.
    await expect(
      verifyRelayChain(
        { jsonrpc: '2.0', method: 'wmp.message.deliver', params: bob.inbox[0]!.params },
        { lastRelayId: relay2.relay.id, allowUnsigned: true },
      ),
    ).resolves.toBe(2);
    expect(bob.inbox[0]!.relayChain).toMatchObject({
      valid: true,
      hops: [{ signed: true }, { relayId: relay2.relay.id, signed: false }],
    });

    const reply = await bob.client.send([aliceIdentity.did], 'hi alice', { contentType: 'text/plain' });
    await waitFor(() => alice.inbox.length === 1);
    expect(alice.inbox[0]).toMatchObject({ id: reply.messageId, from: bobIdentity.did, body: 'hi alice' });

    await waitFor(
      () => statuses.alice.some((s) => s.status === 'delivered') && statuses.bob.some((s) => s.status === 'delivered'),
      20_000,
    );
    // Both clients acknowledged what they got, and each link what its peer kept for it: nothing
    // is left at either relay, so no status is still to come.
    await waitFor(async () => (await relay1.relay.stores.queue.totals()).count === 0, 20_000);
    await waitFor(async () => (await relay2.relay.stores.queue.totals()).count === 0, 20_000);
    expect(statuses.alice).toEqual([
      expect.objectContaining({ messageId: sent.messageId, status: 'delivered', recipient: bobIdentity.did }),
    ]);
    expect(statuses.bob).toEqual([
      expect.objectContaining({ messageId: reply.messageId, status: 'delivered', recipient: aliceIdentity.did }),
    ]);
    expect(bob.inbox).toHaveLength(1);
    expect(alice.inbox).toHaveLength(1);
  });
});
