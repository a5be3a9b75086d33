import { generateKeypair, verifyRelayChain } from '@wmp/jcs-signing';
import { WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { MemoryRelayStores } from '../src/node.js';
import {
  asMessage,
  CLIENT_CAPABILITIES,
  type Client,
  codeOf,
  relayTestbed,
  waitFor,
} from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open } = testbed;

/** Joins a group session on the client's connection; group messages are collected raw. */
async function join(client: Client, groupId: string): Promise<Record<string, any>[]> {
  await client.peer.request('wmp.session.join', {
    wmp: { version: '0.1', sender: client.keypair.did },
    session_id: groupId,
  });
  const got: Record<string, any>[] = [];
  client.peer.setNotificationHandler('wmp.message.deliver', (p) => void got.push(p as Record<string, any>));
  return got;
}

describe('group sessions at the relay (docs/architecture.md)', () => {
  it('fans out to every other participant, live or queued, and refuses everyone else', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const carolKey = generateKeypair();
    const group = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did, carolKey.did],
      capabilities: CLIENT_CAPABILITIES,
    });
    const bobGot = await join(bob, group.id);

    // Carol is offline: Bob gets it live on the group session (Alice hears `delivered` for him),
    // Alice is told `queued` for Carol.
    const { message_id } = (await group.request('wmp.message.deliver', { body: 'to the group' })) as any;
    await waitFor(() => bobGot.length === 1);
    expect(bobGot[0]!.wmp.session_id).toBe(group.id);
    expect(bobGot[0]!.wmp.sender).toBe(alice.keypair.did);
    await expect(
      verifyRelayChain(asMessage(bobGot[0]!), { lastRelayId: testbed.relay!.id, allowUnsigned: true }),
    ).resolves.toBe(1);
    await waitFor(() => alice.statuses.length === 2);
    const byRecipient = Object.fromEntries(alice.statuses.map((st) => [st.recipient, st]));
    expect(byRecipient[carolKey.did]).toMatchObject({ message_id, status: 'queued' });
    expect(byRecipient[bob.keypair.did]).toMatchObject({ message_id, status: 'delivered' });

    // Carol comes online, joins, registers: the backlog arrives on the group session.
    const carol = await open(url, { keypair: carolKey });
    const carolGot = await join(carol, group.id);
    await carol.register();
    // (A register replays everything unacknowledged: at-least-once, so count distinct ids.)
    await waitFor(() => carolGot.length >= 1);
    expect(carolGot[0]).toMatchObject({ body: 'to the group', wmp: { session_id: group.id, message_id } });
    // Written to her connection: `delivered`, once, before any ack.
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered' && s.recipient === carolKey.did));
    await carol.session.notify('wmp.message.ack', { message_ids: [message_id], status: 'received' });

    // Bob replies to the group: Alice (creator) and Carol get it; Bob does not get his own.
    const aliceGot: Record<string, any>[] = [];
    group.on('message', (m) => aliceGot.push(m));
    await bob.peer.notify('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: group.id, sender: bob.keypair.did },
      body: 'reply',
    });
    const bodies = (got: Record<string, any>[]) => [...new Set(got.map((m) => m.body))];
    await waitFor(() => bodies(carolGot).includes('reply'));
    await bob.peer.notify('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: group.id, sender: bob.keypair.did },
      to: [alice.keypair.did],
      body: 'only alice',
    });
    await waitFor(() => aliceGot.length === 2);
    // Markers: Bob and then Alice write to the whole group; whatever else was routed to anyone
    // came before them.
    await bob.peer.notify('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: group.id, sender: bob.keypair.did },
      body: 'end',
    });
    await waitFor(() => aliceGot.length === 3);
    await group.request('wmp.message.deliver', { body: 'end-2' });
    await waitFor(() => bobGot.length === 2 && bodies(carolGot).includes('end') && bodies(carolGot).includes('end-2'));
    expect(aliceGot.map((m) => m.body)).toEqual(['reply', 'only alice', 'end']);
    expect(bodies(carolGot).sort()).toEqual(['end', 'end-2', 'reply', 'to the group']);
    expect(bobGot.map((m) => m.body)).toEqual(['to the group', 'end-2']); // never his own

    // A non-member cannot join, and cannot send on the group's id (-31002).
    const mallory = await open(url);
    expect(
      await codeOf(
        mallory.peer.request('wmp.session.join', {
          wmp: { version: '0.1', sender: mallory.keypair.did },
          session_id: group.id,
        }),
      ),
    ).toBe(-31002);
    expect(
      await codeOf(
        mallory.peer.request('wmp.message.deliver', {
          wmp: { version: '0.1', session_id: group.id, sender: mallory.keypair.did },
          body: 'let me in',
        }),
      ),
    ).toBe(-31002);
    // A member naming a recipient outside the group: -31008.
    expect(await codeOf(group.request('wmp.message.deliver', { to: [mallory.keypair.did], body: 'x' }))).toBe(-31008);
    // A message to Mallory on Alice's own session is the marker: nothing of the group came before it.
    await alice.session.send([mallory.keypair.did], 'marker');
    await waitFor(() => mallory.inbox.length > 0);
    expect(mallory.inbox.map((m) => m.body)).toEqual(['marker']);
  });
});
