// Issue 23 item 21: a sender whose card lists both relays (needed for sealed mail across relays)
// is homed at both. Relay 2 refused relay 1's forwards of her messages as `sender_homed_here`,
// while the sender had been told `queued`. Relay 2 now refuses only a sender registered there
// now, or one relay 1 may not speak for; and the sender hears why (`dropped`, `peer_refused`,
// with the peer's code and `data.reason`).
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { createCard, generateEncKeypair } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();

/** Two relays, peers of each other; Bob's home is relay 2 (a route at relay 1). */
async function twoRelays(bob: string) {
  return bed.setup(2, (i, urls) => ({
    federation: {
      peers: [urls[1 - i]!],
      routes: i === 0 ? [{ pattern: bob, url: urls[1]! }] : [],
      timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
    },
  }));
}

/** Alice's signed card listing `relays`, in the directory of every relay of the bed. */
async function publishCard(key: Keypair, relays: readonly string[]) {
  const card = await createCard({ signer: key, enc: generateEncKeypair().multikey, relays });
  for (const relay of bed.relays) expect(await relay!.stores.box.putCard(card, Date.now())).toBe('stored');
}

describe('federation: a sender homed at both relays (issue 23 item 21)', () => {
  it('her card lists both relays: relay 2 takes relay 1 forwards of her messages, Bob gets them live', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bob.did);
    await publishCard(aliceKey, [u1!, u2!]);
    const b = await bed.open(u2!, { keypair: bob });
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const { message_id } = (await alice.session.send([bob.did], { hi: 'bob' })) as { message_id: string };
    await waitFor(() => b.inbox.length === 1);
    expect(b.inbox[0]!.wmp).toMatchObject({ sender: aliceKey.did, message_id });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'));
    expect(alice.statuses.filter((s) => s.status === 'dropped')).toEqual([]);
    expect(bed.relays[1]!.core.federation!.metrics.refusedInByReason.get('sender_homed_here')).toBeUndefined();
  });

  it('she is registered at relay 2 now: the forward is refused, and she hears dropped / peer_refused / sender_homed_here', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bob.did);
    await publishCard(aliceKey, [u1!, u2!]);
    await bed.open(u2!, { keypair: aliceKey }); // her other device, registered at relay 2
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const { message_id } = (await alice.session.send([bob.did], { n: 1 })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped' && s.message_id === message_id));
    const dropped = alice.statuses.find((s) => s.status === 'dropped' && s.message_id === message_id)!;
    expect(dropped).toMatchObject({
      recipient: bob.did,
      reason: 'peer_refused',
      data: { code: -31002, reason: 'sender_homed_here' },
    });
    expect((await bed.relays[1]!.stores.queue.stats(bob.did)).count).toBe(0);
  });

  it('her card names relay 2 only and the message is unsigned: refused as peer_may_not_speak_for_sender, and she hears it', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(bob.did);
    await publishCard(aliceKey, [u2!]);
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const { message_id } = (await alice.session.send([bob.did], { n: 2 })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped' && s.message_id === message_id));
    expect(alice.statuses.find((s) => s.status === 'dropped')).toMatchObject({
      reason: 'peer_refused',
      data: { code: -31002, reason: 'peer_may_not_speak_for_sender' },
    });
    expect((await bed.relays[1]!.stores.queue.stats(bob.did)).count).toBe(0);
  });
});
