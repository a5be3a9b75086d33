import { generateKeypair, verifyRelayChain } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { MemoryRelayStores } from '../src/node.js';
import { asMessage, codeOf, relayTestbed, waitFor } from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open } = testbed;

describe('live routing through the relay', () => {
  it('routes between two WebSocket clients and one on HTTP + SSE, with a verifiable relay_chain', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const carol = await open(url, { binding: 'http' });

    const answer = (await alice.session.send([bob.keypair.did, carol.keypair.did], { text: 'hi' })) as Record<
      string,
      any
    >;
    // Both online: on disk and being forwarded (decision 0361); `delivered` follows for each.
    expect(answer.status).toBe('accepted');
    expect(answer.message_id).toMatch(/^msg-[A-Za-z0-9_-]{22}$/);

    await waitFor(() => bob.inbox.length === 1 && carol.inbox.length === 1);
    for (const [who, got] of [
      [bob, bob.inbox[0]!],
      [carol, carol.inbox[0]!],
    ] as const) {
      expect(got.body).toEqual({ text: 'hi' });
      expect(got.wmp.sender).toBe(alice.keypair.did);
      expect(got.wmp.message_id).toBe(answer.message_id);
      expect(got.wmp.session_id).toBe(who.session.id); // delivered on the recipient's own session
      expect(got.wmp.relay_chain).toHaveLength(1);
      expect(got.wmp.relay_chain[0].relay_id).toBe(testbed.relay!.id);
      // One relay, its recipient on its own connection: the entry is written unsigned (the
      // default `when-needed`, docs/wmp-profile.md "Relay chain"); signed entries: evidence.test.ts.
      expect(Object.keys(got.wmp.relay_chain[0]).sort()).toEqual(['relay', 'relay_id', 'timestamp']);
      await expect(
        verifyRelayChain(asMessage(got), { lastRelayId: testbed.relay!.id, allowUnsigned: true }),
      ).resolves.toBe(1);
      await expect(verifyRelayChain(asMessage(got))).rejects.toMatchObject({
        code: -31010,
        data: { reason: 'missing' },
      });
    }

    // HTTP -> WebSocket, and a notification gets a relay-assigned id.
    await carol.session.notify('wmp.message.deliver', { to: [alice.keypair.did], body: 'over http' });
    await waitFor(() => alice.inbox.length === 1);
    expect(alice.inbox[0]!.body).toBe('over http');
    expect(alice.inbox[0]!.wmp.message_id).toMatch(/^msg-/);
    // Live recipients: no `queued` status. One would have been written to alice's connection while
    // her message was routed, before the answer she had before carol sent hers.
    expect(alice.statuses.filter((s) => s.status === 'queued')).toEqual([]);
  });

  it('gives every registered device of an identity every message; acks give exactly one delivered', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const bob2 = await open(url, { keypair: bob.keypair });
    const { message_id } = (await alice.session.send([bob.keypair.did], 'both')) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1 && bob2.inbox.length === 1);
    await bob.session.notify('wmp.message.ack', { message_ids: [message_id], status: 'received' });
    await bob2.session.notify('wmp.message.ack', { message_ids: [message_id], status: 'received' });
    await waitFor(() => alice.statuses.length > 0);
    // A second message, acked by both devices, is the marker: another status about the first
    // would have come before the marker's own `delivered`.
    const marker = ((await alice.session.send([bob.keypair.did], 'marker')) as { message_id: string }).message_id;
    await waitFor(() => bob.inbox.length === 2 && bob2.inbox.length === 2);
    await bob.session.notify('wmp.message.ack', { message_ids: [marker], status: 'received' });
    await bob2.session.notify('wmp.message.ack', { message_ids: [marker], status: 'received' });
    await waitFor(() => alice.statuses.some((s) => s.message_id === marker));
    expect(alice.statuses.filter((s) => s.message_id !== marker)).toEqual([
      expect.objectContaining({ message_id, status: 'delivered', recipient: bob.keypair.did }),
    ]);
  });

  it('refuses a spoofed sender and a foreign session id (-31002)', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const mallory = await open(url);
    const spoofed = mallory.session.request('wmp.message.deliver', {
      wmp: { sender: alice.keypair.did },
      to: [bob.keypair.did],
      body: 'from alice, honest',
    });
    expect(await codeOf(spoofed)).toBe(-31002);
    const foreign = mallory.peer.request('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: alice.session.id, sender: mallory.keypair.did },
      to: [bob.keypair.did],
      body: 'on alice session',
    });
    expect(await codeOf(foreign)).toBe(-31002);
    const foreignAsAlice = mallory.peer.request('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: alice.session.id, sender: alice.keypair.did },
      to: [bob.keypair.did],
      body: 'on alice session',
    });
    expect(await codeOf(foreignAsAlice)).toBe(-31002);
    // A message alice sends afterwards is the marker: anything routed before it came first.
    await alice.session.send([bob.keypair.did], 'marker');
    await waitFor(() => bob.inbox.length > 0);
    expect(bob.inbox.map((m) => m.body)).toEqual(['marker']);
  });

  it('routes nothing to a client that never authenticates, and refuses its calls', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const lurker = generateKeypair();
    const { connectPeer } = await import('./fixtures/relay-clients.js');
    const peer = await connectPeer(url);
    const got: unknown[] = [];
    peer.setNotificationHandler('wmp.message.deliver', (p) => void got.push(p));
    const created = (await peer.request('wmp.session.create', {
      wmp: { version: '0.1', sender: lurker.did },
      capabilities_offered: { messaging: {}, relay: {}, offline: {} },
    })) as { wmp: { session_id: string }; auth_required?: boolean };
    expect(created.auth_required).toBe(true);
    const register = peer.request('wmp.relay.register', {
      wmp: { version: '0.1', session_id: created.wmp.session_id, sender: lurker.did },
    });
    expect(await codeOf(register)).toBe(-31002);
    const { status } = (await alice.session.send([lurker.did], 'secret')) as { status: string };
    expect(status).toBe('queued');
    await waitFor(() => alice.statuses.some((s) => s.status === 'queued'));
    // The relay forwards to live connections before it says `queued`; an answer on the lurker's
    // own connection now comes after anything forwarded to it.
    expect(await codeOf(peer.request('wmp.nonexistent', { wmp: { version: '0.1' } }))).toBe(-32601);
    expect(got).toEqual([]);
    await peer.close();
  });

  it('delivers to third parties without the relay capability, and needs a recipient list on a hop session', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url, { capabilities: { messaging: {} } });
    const bob = await open(url);
    expect(await alice.session.send([bob.keypair.did], 'x')).toMatchObject({ message_id: expect.any(String) });
    await waitFor(() => bob.inbox.some((m) => m.body === 'x'));
    const carol = await open(url);
    expect(await codeOf(carol.session.request('wmp.message.deliver', { body: 'to nobody' }))).toBe(-32602);
  });
});
