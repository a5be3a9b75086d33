import { generateKeypair, verifyRelayChain } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { federationTestbed } from './fixtures/federation.js';
import { asMessage, waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();

describe('federation: two relays, peers of each other', () => {
  it('delivers live across the relays with a two-entry chain that verifies hop by hop', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    // Each relay routes the other's user there: relay 2 resolves Alice's home to relay 1.
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob.did : aliceKey.did, url: urls[1 - i]! }],
      },
    }));
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const b = await bed.open(u2!, { keypair: bob });
    const result = (await alice.session.send([bob.did], { hi: 'bob' })) as { message_id: string };
    await waitFor(() => b.inbox.length === 1);
    const got = b.inbox[0]!;
    expect(got.body).toEqual({ hi: 'bob' });
    expect(got.wmp.sender).toBe(alice.keypair.did);
    expect(got.wmp.message_id).toBe(result.message_id);
    const chain = got.wmp.relay_chain as Array<{ relay_id: string }>;
    expect(chain.map((e) => e.relay_id)).toEqual([bed.relays[0]!.id, bed.relays[1]!.id]);
    expect(await verifyRelayChain(asMessage(got))).toBe(2);
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'));
    const delivered = alice.statuses.filter((s) => s.status === 'delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ message_id: result.message_id, recipient: bob.did });
  });
});
