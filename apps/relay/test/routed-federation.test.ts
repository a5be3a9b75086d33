// Issue 25 item 2 with real processes: two wmp-relay processes, peers of each other, each routing
// the other's user there (`--route`). Alice (an SDK client of relay 1) opens a session end to end
// to Bob (an SDK client of relay 2, `onSession`): relay 1 passes her create over its link to relay
// 2, which offers it to Bob. Bob answers, authenticates Alice and proves himself; the built-in
// approval and sign flows, resolve, messages both ways and close cross both relays.
import { connect, Identity, type IncomingSession, type PeerMessage, type WmpClient } from '@wmp/client-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { type RelayProcess, startRelayProcess, waitFor } from './fixtures/relay-process.js';

type Binding = 'ws' | 'http';
const BINDINGS: readonly Binding[] = ['ws', 'http'];

const relays: RelayProcess[] = [];
const clients: WmpClient[] = [];
let urls: [string, string];
/** Alice and Bob per binding: their routes are given to the relays at start. */
const users = new Map(BINDINGS.map((b) => [b, { alice: Identity.generate(), bob: Identity.generate() }]));

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  urls = ports.map((p) => `http://127.0.0.1:${p}`) as [string, string];
  const routes = (i: number) =>
    [...users.values()].flatMap(({ alice, bob }) => ['--route', `${(i === 0 ? bob : alice).did}=${urls[1 - i]}`]);
  for (const i of [0, 1]) {
    relays.push(
      await startRelayProcess(
        [...['--ephemeral', '--port', String(ports[i]), '--log-level', 'warn', '--peer', urls[1 - i]!], ...routes(i)],
        { timeoutMs: 60_000 },
      ),
    );
  }
  // Each relay's link to the other is up.
  const up = /^wmp_relay_peer_connected\{.*\} 1$/m;
  for (const url of urls) await waitFor(async () => up.test(await (await fetch(`${url}/metrics`)).text()), 30_000);
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const r of relays) {
    r.child.kill('SIGTERM');
    await r.exited;
  }
});

async function client(url: string, identity: Identity, binding: Binding): Promise<WmpClient> {
  const endpoint = binding === 'ws' ? `${url.replace(/^http/, 'ws')}/wmp` : `${url}/wmp`;
  const c = await connect(endpoint, { identity, reconnect: false });
  clients.push(c);
  return c;
}

describe.each(BINDINGS)('a session end to end across two wmp-relay processes (%s)', (binding) => {
  it('Bob answers: approval and sign flows, resolve, messages both ways, close', async () => {
    const { alice: aliceId, bob: bobId } = users.get(binding)!;
    const alice = await client(urls[0], aliceId, binding);
    const bob = await client(urls[1], bobId, binding);
    const incoming: IncomingSession[] = [];
    await bob.onSession((s) => incoming.push(s), {
      consent: {
        approval: (review) => ({ approved: review.request.subject === 'Pay invoice 42' }),
        sign: () => true,
      },
      resolvers: { endpoint: (uri) => (uri === 'wmp:bob' ? { metadata: { url: 'wss://bob.example/wmp' } } : null) },
    });

    const session = await alice.openSession(bobId.did, { whenHosted: 'refuse' });
    expect(session.responder).toBe(bobId.did);
    await waitFor(() => incoming.length === 1);
    expect(incoming[0]!.initiator).toBe(aliceId.did);

    await expect(session.requestApproval({ subject: 'Pay invoice 42' })).resolves.toMatchObject({
      approved: true,
      approver: bobId.did,
    });
    const proof = await session.requestSignature({ action: 'sign_document', payload: 'The contract, v3' });
    expect(proof).toMatchObject({ signer: bobId.did, action: 'sign_document' });
    expect(proof.claims).toMatchObject({ aud: session.id, document_hash: expect.any(String) });
    await expect(session.resolve('wmp:bob', 'endpoint')).resolves.toMatchObject({
      metadata: { url: 'wss://bob.example/wmp' },
    });

    // Messages both ways, each with both relays' chain entries, the last its receiver's relay.
    const atBob: PeerMessage[] = [];
    incoming[0]!.on('message', (m) => {
      atBob.push(m);
    });
    await session.send({ text: 'hello Bob' });
    await waitFor(() => atBob.length === 1, 20_000);
    expect(atBob[0]).toMatchObject({ from: aliceId.did, body: { text: 'hello Bob' } });
    expect(atBob[0]!.relayChain).toMatchObject({ valid: true });
    expect(atBob[0]!.relayChain!.hops).toHaveLength(2);
    const atAlice: PeerMessage[] = [];
    session.on('message', (m) => {
      atAlice.push(m);
    });
    await incoming[0]!.send({ text: 'hello Alice' });
    await waitFor(() => atAlice.length === 1, 20_000);
    expect(atAlice[0]).toMatchObject({ from: bobId.did, body: { text: 'hello Alice' } });
    expect(atAlice[0]!.relayChain).toMatchObject({ valid: true });

    const closedAtBob: string[] = [];
    incoming[0]!.on('closed', ({ by }) => {
      closedAtBob.push(by);
    });
    await session.close();
    await waitFor(() => closedAtBob.length === 1);
    expect(closedAtBob).toEqual(['peer']);
  });
});
