import { generateKeypair } from '@wmp/jcs-signing';
import { type Peer, WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import {
  deliverToInitiator,
  expectResponderAnswers,
  OFFERED,
  openRoutedSession,
  responderFor,
} from '../../../test-support/routed-parties.js';
import { type Binding, codeOf, connectPeer, relayTestbed, waitFor } from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open } = testbed;

describe.each<[Binding, Binding]>([
  ['ws', 'ws'],
  ['http', 'http'],
  ['ws', 'http'],
])('a session routed end to end through one relay (A on %s, B on %s)', (aBinding, bBinding) => {
  it('B answers the create, authenticates A, runs a flow, resolve, its own method, deliveries both ways and close', async () => {
    const url = await setup();
    const alice = await open(url, { binding: aBinding });
    const bob = await open(url, { binding: bBinding });
    const { bridge, received, session } = await openRoutedSession(alice, bob, { verifyResponder: true });
    expect(session.responder).toBe(bob.keypair.did);
    expect(bridge.sessions.has(session.id)).toBe(true);
    expect((await bridge.server.store.get(session.id))?.authenticated).toEqual([alice.keypair.did]);

    await expectResponderAnswers(session);

    // A deliver on the routed session is stored and forwarded by the relay, to B's responder.
    const sent = (await session.send([bob.keypair.did], { text: 'to B' })) as { message_id: string };
    await waitFor(() => received.length === 1);
    expect(received[0]).toMatchObject({ body: { text: 'to B' }, wmp: { sender: alice.keypair.did } });
    expect(received[0]!.wmp.message_id).toBe(sent.message_id);
    // What the relay stored is acknowledged to the relay, on the routed session too.
    const queue = testbed.relay!.core.stores.queue;
    expect((await queue.stats(bob.keypair.did)).count).toBe(1);
    await bob.peer.notify('wmp.message.ack', {
      wmp: { version: '0.1', session_id: session.id, sender: bob.keypair.did },
      message_ids: [sent.message_id],
      status: 'received',
    });
    await expect.poll(async () => (await queue.stats(bob.keypair.did)).count).toBe(0);

    // B to A on the same session: B's server notifies its session.
    await deliverToInitiator(bridge, session, alice.keypair.did, { text: 'to A' });

    await session.close();
    await waitFor(() => !bridge.sessions.has(session.id));
    expect(await testbed.relay!.core.stores.sessions.get(session.id)).toBeUndefined();
  });
});

describe('routed sessions: fallback, binding and bounds', () => {
  it('hosts the session when B is offline, or answers -32601 (a mailbox-only client), and says so', async () => {
    const url = await setup();
    const alice = await open(url);
    const offline = generateKeypair();
    const hosted = await WmpSession.open(alice.peer, { signer: alice.keypair, participants: [offline.did] });
    const created = await testbed.relay!.core.stores.sessions.get(hosted.id);
    expect(created?.participants).toEqual([alice.keypair.did, offline.did]);
    // B online but without a responder: its client answers -32601; the relay hosts the session.
    const bob = await open(url);
    const peer = alice.peer;
    const answer = (await peer.request('wmp.session.create', {
      wmp: { version: '0.1', sender: alice.keypair.did },
      participants: [bob.keypair.did],
    })) as { wmp: { relay_hosted?: boolean; session_id: string } };
    expect(answer.wmp.relay_hosted).toBe(true);
  });

  it('passes nothing from a third party, a spoofed sender or a connection that never logged in (-31002)', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    const mallory = await open(url);
    await responderFor(bob.keypair, bob.peer);
    const session = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: OFFERED,
    });
    const call = (peer: Peer, sender: string | undefined) =>
      peer.request('org.example.ping', {
        wmp: { version: '0.1', session_id: session.id, ...(sender ? { sender } : {}) },
        text: 'x',
      });
    expect(await codeOf(call(mallory.peer, mallory.keypair.did))).toBe(-31002);
    expect(await codeOf(call(mallory.peer, alice.keypair.did))).toBe(-31002);
    expect(await codeOf(call(mallory.peer, undefined))).toBe(-31002);
    const stranger = await connectPeer(url);
    expect(await codeOf(call(stranger, alice.keypair.did))).toBe(-31002);
    await stranger.close();
    // A itself still gets through.
    await expect(call(alice.peer, alice.keypair.did)).resolves.toMatchObject({ pong: 'x' });
  });

  it('refuses an answer that names a session id already in use, and routes nothing', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    // B's client answers every create with Alice's own hop session id.
    bob.peer.divert = (message) => {
      if (!('method' in message) || message.method !== 'wmp.session.create' || !('id' in message)) return false;
      void bob.peer.send({
        jsonrpc: '2.0',
        id: message.id,
        result: { wmp: { version: '0.1', session_id: alice.session.id }, capabilities: {} },
      });
      return true;
    };
    const e = (await alice.peer
      .request('wmp.session.create', {
        wmp: { version: '0.1', sender: alice.keypair.did },
        participants: [bob.keypair.did],
      })
      .catch((x: unknown) => x)) as { code: number; data: { reason: string } };
    expect(e).toMatchObject({ code: -32603, data: { reason: 'session_id_in_use' } });
    // Alice's own session is untouched.
    await expect(alice.session.request('wmp.capability.list', {})).resolves.toBeDefined();
  });

  it('answers peer_offline at once when B went away, and peer_timeout when B does not answer', async () => {
    const url = await setup({ timings: { routedRequestTimeoutMs: 300 } });
    const alice = await open(url);
    const bob = await open(url);
    const { bridge } = await responderFor(bob.keypair, bob.peer);
    const session = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: OFFERED,
    });
    // B stops answering (its responder is detached): the request times out.
    bridge.detach();
    bob.peer.divert = () => true;
    expect(await session.request('org.example.ping', { text: 'x' }).catch((e: { data?: unknown }) => e.data)).toEqual({
      reason: 'peer_timeout',
    });
    await testbed.disconnect(bob);
    expect(await session.request('org.example.ping', { text: 'x' }).catch((e: { data?: unknown }) => e.data)).toEqual({
      reason: 'peer_offline',
    });
  });

  it('bounds the requests in flight per connection', async () => {
    const url = await setup({ limits: { maxForwardedPerConnection: 2 } });
    const alice = await open(url);
    const bob = await open(url);
    await responderFor(bob.keypair, bob.peer);
    const session = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: OFFERED,
    });
    // B holds every request after the create: two are in flight once both reached it.
    let arrived = 0;
    bob.peer.divert = (m) => {
      if (!('method' in m) || m.method !== 'org.example.ping') return false;
      arrived++;
      return true;
    };
    const held = [
      session.request('org.example.ping', { text: '1' }),
      session.request('org.example.ping', { text: '2' }),
    ];
    for (const p of held) p.catch(() => undefined);
    await waitFor(() => arrived === 2);
    const third = (await session.request('org.example.ping', { text: '3' }).catch((e: unknown) => e)) as {
      code: number;
      data: unknown;
    };
    expect(third).toMatchObject({ code: -31007, data: { reason: 'too many requests in flight' } });
  });
});
