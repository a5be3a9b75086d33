// Sessions end to end between two WmpClients through a real relay (transport §6.2): Bob answers
// the sessions others open to him (`onSession`), Alice opens one to him (`openSession`); the relay
// only routes. Flows, resolve, deliveries both ways, a reconnect, close, and the fallback to a
// session the relay hosts when Bob cannot answer.
import type { FlowType } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import type { IncomingSession, PeerMessage } from '../src/node.js';
import { type Binding, clientTestbed, waitFor } from './client-testbed.js';

const bed = clientTestbed();

const approval: FlowType = {
  actions: { awaiting_review: ['approve', 'reject'] },
  onStart: (_params, flow) => flow.progress('awaiting_review', { amount: 42 }),
  onAction: (action, _params, flow) =>
    action === 'approve' ? flow.complete({ approved: true }) : flow.fail('rejected'),
};

describe.each<Binding>(['ws', 'http'])('end-to-end sessions between two clients (%s)', (binding) => {
  it('Bob answers: flow, resolve, messages both ways, a reconnect of Alice, and close', async () => {
    const { url, relay } = await bed.relay();
    const alice = await bed.client(url, { binding });
    const bob = await bed.client(url, { binding });
    const incoming: IncomingSession[] = [];
    await bob.client.onSession((s) => incoming.push(s), {
      flows: { approval },
      resolvers: { endpoint: (uri) => (uri === 'wmp:bob' ? { metadata: { url: 'wss://bob.example/wmp' } } : null) },
    });

    const session = await alice.client.openSession(bob.identity.did);
    expect(session.relayHosted).toBe(false);
    expect(session.responder).toBe(bob.identity.did);
    await waitFor(() => incoming.length === 1);
    expect(incoming[0]!.initiator).toBe(alice.identity.did);

    const steps: string[] = [];
    const flow = await session.startFlow('approval', {}, { onProgress: (step) => steps.push(step) });
    await waitFor(() => steps.length === 1);
    await session.actOnFlow(flow.flowId, 'approve');
    await expect(flow.done).resolves.toEqual({ approved: true });
    await expect(session.resolve('wmp:bob', 'endpoint')).resolves.toMatchObject({
      metadata: { url: 'wss://bob.example/wmp' },
    });

    const atBob: PeerMessage[] = [];
    incoming[0]!.on('message', (m) => {
      atBob.push(m);
    });
    await session.send({ text: 'hello Bob' });
    await waitFor(() => atBob.length === 1);
    expect(atBob[0]).toMatchObject({ from: alice.identity.did, body: { text: 'hello Bob' } });

    const atAlice: PeerMessage[] = [];
    session.on('message', (m) => {
      atAlice.push(m);
    });
    await incoming[0]!.send({ text: 'hello Alice' });
    await waitFor(() => atAlice.length === 1);
    expect(atAlice[0]).toMatchObject({ from: bob.identity.did, body: { text: 'hello Alice' } });

    // Alice's connection drops; the client reconnects and the session goes on without a new create.
    const before = relay.core.connections;
    await alice.client.request('wmp.capability.list');
    for (const c of relay.core.server.connectionsOf(alice.client.sessionId!)) await c.peer.close();
    await waitFor(() => alice.client.state === 'reconnecting' || relay.core.connections < before);
    await waitFor(() => alice.client.state === 'connected');
    await expect(session.resolve('wmp:bob', 'endpoint')).resolves.toMatchObject({
      metadata: { url: 'wss://bob.example/wmp' },
    });

    const closedAtBob: string[] = [];
    incoming[0]!.on('closed', ({ by }) => {
      closedAtBob.push(by);
    });
    await session.close();
    await waitFor(() => closedAtBob.length === 1);
    expect(closedAtBob).toEqual(['peer']);
    expect(incoming[0]!.closed).toBe(true);
  });
});

describe('end-to-end sessions: when the other party cannot answer', () => {
  it('falls back to a session the relay hosts (relayHosted), or refuses with whenHosted: refuse', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url); // online, but answers no sessions
    const hosted = await alice.client.openSession(bob.identity.did);
    expect(hosted.relayHosted).toBe(true);
    // A message on it still reaches Bob, through the relay.
    await hosted.send({ text: 'queued for Bob' });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ body: { text: 'queued for Bob' }, from: alice.identity.did });
    await expect(alice.client.openSession(bob.identity.did, { whenHosted: 'refuse' })).rejects.toMatchObject({
      code: 'ERR_CLIENT_PEER_UNREACHABLE',
    });
  });

  it('refuses an initiator the application does not accept, with -31002 as the answer', async () => {
    const { url } = await bed.relay();
    const alice = await bed.client(url);
    const bob = await bed.client(url);
    await bob.client.onSession(() => undefined, { accept: (initiator) => initiator !== alice.identity.did });
    await expect(alice.client.openSession(bob.identity.did)).rejects.toMatchObject({
      code: -31002,
      data: { reason: 'not accepted' },
    });
  });
});
