import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it } from 'vitest';
import { responderFor } from '../../../test-support/routed-parties.js';
import {
  type Connection,
  InMemoryTransport,
  isRouted,
  MemorySessionStore,
  PassedError,
  Peer,
  type RoutedSessionRecord,
  type SessionRoutes,
  WmpServer,
  WmpSession,
} from '../src/index.js';
import { codeOf } from './helpers.js';

/**
 * A router in the smallest form the session engine allows (the relay's is in relay-server): it
 * offers a create naming one other participant to that participant's connection and passes the
 * frames of the sessions it routed, each way, by `Peer.forward` / `send`.
 */
function router() {
  const store = new MemorySessionStore();
  const byIdentity = new Map<string, Connection>();
  const identityOf = (c: Connection) => [...c.sessions.values()].find((b) => b.identity !== undefined)?.identity;
  const routes: SessionRoutes = {
    async offer(params, ctx) {
      const sender = params.wmp.sender;
      const to = params.participants;
      if (to?.length !== 1 || sender === undefined || identityOf(ctx.connection) !== sender) return undefined;
      const target = byIdentity.get(to[0]!);
      if (target === undefined) return { host: { relay_hosted: true } };
      const answer = await target.peer.forward('wmp.session.create', params as Record<string, unknown>);
      if ('error' in answer) return { host: { relay_hosted: true } };
      const result = answer.result as { wmp: { session_id: string } };
      const record: RoutedSessionRecord = {
        id: result.wmp.session_id,
        version: '0.1',
        initiator: sender,
        participants: [sender, to[0]!],
        capabilities: {},
        security: { mode: 'tls' },
        state: 'active',
        authenticated: [],
        challenge: undefined,
        resumptionTokens: [],
        createdAt: Date.now(),
        expiresAt: Date.now() + 60_000,
        route: { initiator: sender, responder: to[0]! },
      };
      await store.create(record);
      return { answer: result as Record<string, unknown> };
    },
    async pass(message, session, ctx) {
      const from = identityOf(ctx.connection);
      const sender = (message.params as { wmp?: { sender?: string } } | undefined)?.wmp?.sender;
      const { initiator, responder } = session.route;
      if (from === undefined || (from !== initiator && from !== responder) || (sender !== undefined && sender !== from))
        throw new NotAuthorizedError({ reason: 'not a party of this session' });
      const other = byIdentity.get(from === initiator ? responder : initiator)!;
      if (!('id' in message)) {
        await other.peer.send(message);
        return undefined;
      }
      const answer = await other.peer.forward(message.method, message.params as Record<string, unknown>);
      if ('error' in answer) throw new PassedError(answer.error);
      return answer.result;
    },
  };
  const server = new WmpServer({
    store,
    routes,
    capabilities: { messaging: {} },
    hooks: {
      connectionClosed: (c) => {
        for (const [id, known] of byIdentity) if (known === c) byIdentity.delete(id);
      },
    },
  });
  return {
    server,
    store,
    async connect(keypair: Keypair) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const connection = await server.connect(serverSide);
      const peer = new Peer(clientSide);
      await peer.start();
      const hop = await WmpSession.open(peer, { signer: keypair, capabilities: { messaging: {} } });
      byIdentity.set(keypair.did, connection);
      return { peer, hop, connection };
    },
  };
}

/** A router with Alice (`a`) and Bob (`b`) connected, Bob's responder bridge answering his sessions. */
async function aliceAndBobAtRouter() {
  const relay = router();
  const a = generateKeypair();
  const b = generateKeypair();
  const alice = await relay.connect(a);
  const bob = await relay.connect(b);
  const { bridge } = await responderFor(b, bob.peer);
  return { relay, a, b, alice, bob, bridge };
}

describe('sessions routed through a responder that does not answer them (transport §6.2)', () => {
  it('the other party answers the create, authenticates the initiator and runs flows, resolve and its own methods', async () => {
    const { relay, a, b, alice, bridge } = await aliceAndBobAtRouter();

    const session = await WmpSession.open(alice.peer, {
      signer: a,
      participants: [b.did],
      capabilities: { messaging: {}, flows: {}, resolve: {}, 'org.example.ping': {} },
      verifyResponder: { id: b.did },
    });
    // B proved itself (mutual auth) and negotiated with A: the router only passed frames.
    expect(session.responder).toBe(b.did);
    expect(Object.keys(session.capabilities).sort()).toEqual(['flows', 'messaging', 'org.example.ping', 'resolve']);
    expect(bridge.sessions.has(session.id)).toBe(true);
    expect(isRouted((await relay.store.get(session.id))!)).toBe(true);
    // B authenticated A on B's own session.
    expect((await bridge.server.store.get(session.id))?.authenticated).toEqual([a.did]);

    const steps: string[] = [];
    const flow = await session.startFlow('approval', {}, { onProgress: (step) => steps.push(step) });
    await expect.poll(() => steps).toEqual(['awaiting_review']);
    await session.request('wmp.flow.action', { flow_id: flow.flowId, action: 'approve' });
    await expect(flow.done).resolves.toEqual({ approved: true });

    await expect(session.request('wmp.resolve', { uri: 'wmp:b', type: 'endpoint' })).resolves.toMatchObject({
      metadata: { url: 'wss://b.example/wmp' },
    });
    // A method the router's own registry does not know passes too.
    await expect(session.request('org.example.ping', { text: 'hi' })).resolves.toMatchObject({ pong: 'hi' });
    // B's errors reach A as B gave them.
    const refused = (await session
      .request('wmp.flow.action', { flow_id: flow.flowId, action: 'approve' })
      .catch((e: unknown) => e)) as { code: number };
    expect(refused.code).toBe(-31006);

    await session.close();
    await expect.poll(() => bridge.sessions.has(session.id)).toBe(false);
  });

  it('moves with the client: a bridge attached to a new connection answers the same sessions', async () => {
    const { relay, a, b, alice, bob, bridge } = await aliceAndBobAtRouter();
    const session = await WmpSession.open(alice.peer, {
      signer: a,
      participants: [b.did],
      capabilities: { messaging: {}, 'org.example.ping': {} },
    });
    await bob.peer.close();
    const bob2 = await relay.connect(b);
    bridge.attach(bob2.peer);
    // A's own reconnect: the session is carried on the new connection without a resume.
    const alice2 = await relay.connect(a);
    session.attach(alice2.peer);
    await expect(session.request('org.example.ping', { text: 'again' })).resolves.toMatchObject({ pong: 'again' });
  });

  it('leaves what is not the bridge’s to the client: its own calls and answers are untouched', async () => {
    const relay = router();
    const b = generateKeypair();
    const bob = await relay.connect(b);
    await responderFor(b, bob.peer);
    // The client's own request to its responder, and its answer, pass the bridge by.
    await expect(bob.hop.request('wmp.capability.list', {})).resolves.toBeDefined();
    // A frame naming a session the bridge does not answer is the client's (here: no such session).
    expect(await codeOf(bob.hop.request('wmp.capability.list', { wmp: { session_id: 'ses-unknown' } }))).toBe(-31000);
  });
});
