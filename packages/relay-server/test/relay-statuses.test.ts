import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { HttpClientTransport, readSseStream, SseParser } from '@wmp/transports';
import { describe, expect, it } from 'vitest';
import { MemoryRelayStores } from '../src/node.js';
import { CLIENT_CAPABILITIES, connectPeer, relayTestbed, waitFor } from './fixtures/relay-clients.js';

// Statuses as docs/architecture.md defines them (core §5.3.1, §8.7.2): `delivered` when a message
// is written to a live connection of the recipient, acknowledged or not; exactly one terminal
// status per message; `expired` only for a message never written to any connection.
const testbed = relayTestbed();
const { setup, open } = testbed;

const statusesOf = (statuses: Record<string, any>[], id: string) =>
  statuses.filter((s) => s.message_id === id).map((s) => s.status);

describe('delivery statuses (docs/architecture.md)', () => {
  it('says delivered once when a message reaches a live connection, without any ack', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const first = ((await alice.session.send([bob.keypair.did], 'one')) as any).message_id as string;
    await waitFor(() => bob.inbox.length === 1 && statusesOf(alice.statuses, first).length === 1);
    expect(statusesOf(alice.statuses, first)).toEqual(['delivered']);
    // Bob never acknowledges. A second message is a marker: by its `delivered`, the first had no
    // second status.
    const second = ((await alice.session.send([bob.keypair.did], 'two')) as any).message_id as string;
    await waitFor(() => statusesOf(alice.statuses, second).length === 1);
    expect(statusesOf(alice.statuses, first)).toEqual(['delivered']);
    expect(bob.inbox.map((m) => m.body)).toEqual(['one', 'two']);
  });

  it('says delivered for a queued message when the recipient resumes and gets it, and never expired after that', async () => {
    let now = Date.now();
    const url = await setup({ store: new MemoryRelayStores(), now: () => now });
    const alice = await open(url);
    const bob = await open(url);
    await testbed.disconnect(bob);
    await waitFor(() => testbed.relay!.core.presence.size === 1);
    const id = (
      (await alice.session.request('wmp.message.deliver', {
        to: [bob.keypair.did],
        body: 'while away',
        wmp: { expires_at: new Date(now + 60_000).toISOString() },
      })) as any
    ).message_id as string;
    await waitFor(() => statusesOf(alice.statuses, id).length === 1);
    expect(statusesOf(alice.statuses, id)).toEqual(['queued']);
    // The recipient missed one message (never written anywhere): `missed_messages` says so.
    expect(await bob.session.resume(await connectPeer(url))).toBe(1);
    await waitFor(() => bob.inbox.length === 1 && statusesOf(alice.statuses, id).length === 2);
    expect(statusesOf(alice.statuses, id)).toEqual(['queued', 'delivered']);
    // Unacknowledged, it stays queued for redelivery, but its expiry is silent now.
    now += 120_000;
    await testbed.relay!.core.sweeper.run();
    expect((await testbed.relay!.stores.queue.stats(bob.keypair.did)).count).toBe(0);
    const marker = ((await alice.session.send([bob.keypair.did], 'marker')) as any).message_id as string;
    await waitFor(() => statusesOf(alice.statuses, marker).length === 1);
    expect(statusesOf(alice.statuses, id)).toEqual(['queued', 'delivered']);
  });

  it('says expired only for a message that never reached any connection of the recipient', async () => {
    let now = Date.now();
    const url = await setup({ store: new MemoryRelayStores(), now: () => now });
    const alice = await open(url);
    const bob = generateKeypair();
    const id = (
      (await alice.session.request('wmp.message.deliver', {
        to: [bob.did],
        body: 'nobody home',
        wmp: { expires_at: new Date(now + 60_000).toISOString() },
      })) as any
    ).message_id as string;
    await waitFor(() => statusesOf(alice.statuses, id).length === 1);
    now += 120_000;
    await testbed.relay!.core.sweeper.run();
    await waitFor(() => statusesOf(alice.statuses, id).length === 2);
    expect(statusesOf(alice.statuses, id)).toEqual(['queued', 'expired']);
  });

  it('hands a resumed recipient what it did not acknowledge once per connection, not in a loop', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const id = ((await alice.session.send([bob.keypair.did], 'once')) as any).message_id as string;
    await waitFor(() => bob.inbox.length === 1);
    for (let round = 2; round <= 3; round++) {
      bob.session.lastReceivedId = undefined; // a client that never acks nor sends last_received_id
      await testbed.disconnect(bob);
      // Nothing was missed: it had the message (missed_messages counts what never arrived).
      expect(await bob.session.resume(await connectPeer(url))).toBe(0);
      await waitFor(() => bob.inbox.filter((m) => m.wmp.message_id === id).length >= round);
      const marker = ((await alice.session.send([bob.keypair.did], `marker ${round}`)) as any).message_id;
      await waitFor(() => bob.inbox.some((m) => m.wmp.message_id === marker));
      // On this connection: the replay once, then the marker, nothing again.
      expect(bob.inbox.filter((m) => m.wmp.message_id === id)).toHaveLength(round);
    }
    expect(statusesOf(alice.statuses, id)).toEqual(['delivered']);
  });
});

describe('online means reachable (docs/architecture.md)', () => {
  it('counts an HTTP session as online only while its event stream is open', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    // Bob over HTTP without an event stream: the relay cannot reach him, so it queues.
    const transport = new HttpClientTransport({ endpoint: `${url}/wmp`, events: false });
    const peer = new Peer(transport);
    await peer.start();
    const bob = await WmpSession.open(peer, { signer: generateKeypair(), capabilities: CLIENT_CAPABILITIES });
    await bob.request('wmp.relay.register', {});
    const id = ((await alice.session.send([bob.sender!], 'for later')) as any).message_id as string;
    await waitFor(() => statusesOf(alice.statuses, id).length === 1);
    expect(statusesOf(alice.statuses, id)).toEqual(['queued']);
    // He opens his stream: the message goes out on it, and Alice hears `delivered`.
    const abort = new AbortController();
    const stream = await fetch(`${url}/wmp/events?session_id=${bob.id}`, {
      headers: { Accept: 'text/event-stream', Authorization: `Bearer ${transport.sessionToken}` },
      signal: abort.signal,
    });
    const got: Record<string, any>[] = [];
    void readSseStream(stream.body!, new SseParser(), (e) => void got.push(JSON.parse(e.data))).catch(() => undefined);
    try {
      await waitFor(() => got.length === 1 && statusesOf(alice.statuses, id).length === 2);
      expect(got[0]).toMatchObject({ method: 'wmp.message.deliver', params: { body: 'for later' } });
      expect(statusesOf(alice.statuses, id)).toEqual(['queued', 'delivered']);
    } finally {
      abort.abort();
      await peer.close();
    }
  });
});

describe('a session addressed to a participant (transport §6.2, docs/wmp-profile.md)', () => {
  it('reaches a listed participant who never joined, on its registered connection', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    const group = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: CLIENT_CAPABILITIES,
    });
    // What arrives on Bob's connection (a spec-only client reads every deliver; ours routes by
    // session id, and Bob never heard of this one).
    const got: Record<string, any>[] = [];
    bob.peer.setNotificationHandler('wmp.message.deliver', (p) => void got.push(p as Record<string, any>));
    const answer = (await group.request('wmp.message.deliver', { body: 'hello B' })) as any;
    await waitFor(() => got.length === 1);
    expect(got[0]).toMatchObject({
      body: 'hello B',
      wmp: { session_id: group.id, sender: alice.keypair.did, message_id: answer.message_id },
    });
    await waitFor(() => alice.statuses.length === 1);
    expect(alice.statuses[0]).toMatchObject({ message_id: answer.message_id, status: 'delivered' });
  });
});

describe('refused notifications (docs/architecture.md)', () => {
  it('counts a refused deliver notification, and tells its sender dropped', async () => {
    const url = await setup({ store: new MemoryRelayStores() });
    const alice = await open(url);
    const bob = await open(url);
    // A spoofed sender: refused by the pipeline; a notification has no answer.
    await alice.peer.notify('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: alice.session.id, sender: bob.keypair.did },
      to: [bob.keypair.did],
      body: 'not from me',
    });
    await waitFor(() => alice.statuses.length === 1);
    expect(alice.statuses[0]).toMatchObject({ status: 'dropped', reason: 'sender is not the authenticated identity' });
    expect(alice.statuses[0]!.message_id).toMatch(/^msg-/);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^wmp_relay_errors_total\{code="-31002"\} 1$/m);
    expect(bob.inbox).toEqual([]);
  });
});
