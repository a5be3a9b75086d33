// wmp-relay as a cluster (issue 14, docs/architecture.md, "Cluster"): three relay processes on one
// PostgreSQL and one Redis, started with the flags an operator uses. No sticky sessions: a client
// on any node reaches a client on any other, live and offline, and an HTTP session moves between
// nodes.
import { generateKeypair } from '@wmp/jcs-signing';
import { createEvent, generateEncKeypair, signRequest } from '@wmp/ohan-seal';
import { Peer, WmpSession } from '@wmp/session';
import { HttpClientTransport } from '@wmp/transports/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRoutedSession } from '../../../test-support/routed-parties.js';
import { health, startCluster, type TestCluster } from './fixtures/cluster.js';
import { CLIENT_CAPABILITIES, type Client, connectPeer, disconnect, openClient } from './fixtures/relay-process.js';

let cluster: TestCluster;
let urls: string[];
const clients: Client[] = [];

beforeAll(async () => {
  cluster = await startCluster('three');
  const nodes = await Promise.all(['node-a', 'node-b', 'node-c'].map((id) => cluster.start(id)));
  urls = nodes.map((n) => n.url);
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.peer.close().catch(() => undefined);
  await cluster?.destroy();
}, 60_000);

async function client(node: number, binding: 'ws' | 'http' = 'ws'): Promise<Client> {
  const c = await openClient(urls[node]!, binding);
  clients.push(c);
  return c;
}

describe('three wmp-relay processes on one PostgreSQL and one Redis', () => {
  it('are one relay: one relay_id, each its own node_id, PostgreSQL and Redis healthy', async () => {
    const answers = await Promise.all(urls.map(health));
    expect(new Set(answers.map((h) => h.relay_id)).size).toBe(1);
    expect(answers.map((h) => h.node_id)).toEqual(['node-a', 'node-b', 'node-c']);
    for (const h of answers) expect(h).toMatchObject({ status: 'ok', coordination: 'ok' });
    const metrics = await (await fetch(`${urls[1]}/metrics`)).text();
    expect(metrics).toContain('wmp_relay_node_info{node_id="node-b"} 1');
  });

  it('delivers live from a client on one node to a client on another, with delivered for the sender', async () => {
    const alice = await client(0);
    const bob = await client(1);
    const sent = (await alice.session.send([bob.keypair.did], { hello: 'bob' })) as { message_id: string };
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual([{ hello: 'bob' }]);
    expect(bob.inbox[0]!.wmp.sender).toBe(alice.keypair.did);
    // One terminal status. (`queued` is for a recipient online nowhere, decided by the wake-up's
    // count of nodes; a subscription not yet active at the server is not counted: docs/decisions.md.)
    await expect
      .poll(() =>
        alice.statuses.filter((s) => s.message_id === sent.message_id && s.status !== 'queued').map((s) => s.status),
      )
      .toEqual(['delivered']);
  });

  it('queues for an offline recipient and hands the backlog over on whichever node it resumes', async () => {
    const alice = await client(0);
    const bob = await client(1);
    await disconnect(urls[1]!, bob.peer);
    for (const n of [1, 2, 3]) await alice.session.send([bob.keypair.did], { n });
    await expect.poll(() => alice.statuses.filter((s) => s.status === 'queued').length).toBe(3);

    // Bob comes back on the third node.
    await bob.session.resume(await connectPeer(urls[2]!));
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await expect.poll(() => alice.statuses.filter((s) => s.status === 'delivered').length).toBe(3);
    // And is live there for what comes next from node a.
    await alice.session.send([bob.keypair.did], { n: 4 });
    await expect.poll(() => bob.inbox.length).toBe(4);
  });

  it('runs a group session with one member on each node', async () => {
    const [alice, bob, carol] = await Promise.all([client(0), client(1), client(2)]);
    const group = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did, carol.keypair.did],
      capabilities: CLIENT_CAPABILITIES,
    });
    /** Joins on the member's own connection (its node); the group's messages are collected raw. */
    const join = async (who: Client) => {
      await who.peer.request('wmp.session.join', {
        wmp: { version: '0.1', sender: who.keypair.did },
        session_id: group.id,
      });
      const got: Record<string, any>[] = [];
      who.peer.setNotificationHandler('wmp.message.deliver', (p) => void got.push(p as Record<string, any>));
      return got;
    };
    const [bobGot, carolGot] = await Promise.all([join(bob), join(carol)]);
    const aliceGot: Record<string, any>[] = [];
    group.on('message', (m) => aliceGot.push(m));
    const bodies = (got: Record<string, any>[]) => [...new Set(got.map((m) => m.body))];

    await group.request('wmp.message.deliver', { body: 'from a' });
    await expect.poll(() => bodies(bobGot)).toEqual(['from a']);
    await expect.poll(() => bodies(carolGot)).toEqual(['from a']);
    // Bob on node b writes to the whole group: alice on node a and carol on node c get it.
    await bob.peer.notify('wmp.message.deliver', {
      wmp: { version: '0.1', session_id: group.id, sender: bob.keypair.did },
      body: 'from b',
    });
    await expect.poll(() => bodies(carolGot)).toEqual(['from a', 'from b']);
    await expect.poll(() => bodies(aliceGot)).toEqual(['from b']);
    expect(aliceGot[0]!.wmp).toMatchObject({ session_id: group.id, sender: bob.keypair.did });
    expect(bodies(bobGot)).toEqual(['from a']); // not his own
  });

  it('gives a group creator that never registered the traffic of members on other nodes, live', async () => {
    // The creator's connection is bound to the group session only: no `wmp.relay.register`.
    const creator = generateKeypair();
    const creatorPeer = await connectPeer(urls[0]!);
    // A member on each of the other two nodes (one on the creator's node would make it reachable
    // by a message from there first, and so hide what this is about).
    const members = await Promise.all([client(1), client(2)]);
    const group = await WmpSession.open(creatorPeer, {
      signer: creator,
      participants: members.map((m) => m.keypair.did),
      capabilities: CLIENT_CAPABILITIES,
    });
    const got: Record<string, any>[] = [];
    group.on('message', (m) => got.push(m));
    for (const who of members) {
      await who.peer.request('wmp.session.join', {
        wmp: { version: '0.1', sender: who.keypair.did },
        session_id: group.id,
      });
    }
    for (const [n, who] of members.entries()) {
      await who.peer.notify('wmp.message.deliver', {
        wmp: { version: '0.1', session_id: group.id, sender: who.keypair.did },
        to: [creator.did],
        body: `from member ${n}`,
      });
    }
    // Nothing else would bring them: the safety poll reads the queues of endpoints only.
    await expect
      .poll(() => [...new Set(got.map((m) => m.body))].sort(), { timeout: 4_000 })
      .toEqual(['from member 0', 'from member 1']);
    for (const m of got) expect(m.wmp.session_id).toBe(group.id);
    // It was online: each member hears `delivered`, and no `queued` before it.
    await expect
      .poll(() => members.map((m) => m.statuses.map((s) => s.status)))
      .toEqual([['delivered'], ['delivered']]);
    await creatorPeer.close();
  });

  it('serves an HTTP session whose event stream is on one node and whose POSTs go to another', async () => {
    const bob = await client(2);
    const alice = generateKeypair();
    const opener = new HttpClientTransport({ endpoint: `${urls[0]}/wmp` });
    const peer = new Peer(opener);
    await peer.start();
    const session = await WmpSession.open(peer, { signer: alice, capabilities: CLIENT_CAPABILITIES });
    await session.request('wmp.relay.register', {});

    // The event stream on node b, by the session's id and token.
    const stream = new HttpClientTransport({
      endpoint: `${urls[1]}/wmp`,
      sessionId: session.id,
      sessionToken: opener.sessionToken!,
      events: true,
    });
    const frames: string[] = [];
    stream.onmessage = (f) => frames.push(typeof f === 'string' ? f : new TextDecoder().decode(f));
    await stream.start();
    // POSTs on node a (the opener's transport), addressed to bob on node c.
    await session.send([bob.keypair.did], 'posted on a');
    await expect.poll(() => bob.inbox.map((m) => m.body)).toContain('posted on a');
    expect(bob.inbox.at(-1)!.wmp.sender).toBe(alice.did);
    // What bob sends back arrives on the stream at node b.
    await bob.session.send([alice.did], 'streamed on b');
    await expect.poll(() => frames.some((f) => f.includes('streamed on b'))).toBe(true);
    await stream.close();
    await peer.close();
  });

  it('logs an HTTP session out on one node and every node refuses it at once (issue 23 item 4)', async () => {
    const alice = generateKeypair();
    const opener = new HttpClientTransport({ endpoint: `${urls[0]}/wmp` });
    const peer = new Peer(opener);
    await peer.start();
    const session = await WmpSession.open(peer, { signer: alice, capabilities: CLIENT_CAPABILITIES });
    await session.request('wmp.relay.register', {});
    const headers = { 'wmp-session-id': session.id, 'wmp-session-token': opener.sessionToken! };
    const resumption = session.resumptionToken!;
    // Its event stream on node b.
    const stream = await fetch(`${urls[1]}/wmp/events`, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const ended = (async () => {
      const reader = stream.body!.getReader();
      while (!(await reader.read()).done) {}
    })();

    // The logout, on node c.
    expect((await fetch(`${urls[2]}/wmp`, { method: 'DELETE', headers })).status).toBe(204);
    await ended; // node b ended the stream (told through Redis)
    for (const url of urls) {
      const again = await fetch(`${url}/wmp/events`, { headers: { ...headers, accept: 'text/event-stream' } });
      expect(again.status).toBe(404);
      await again.body?.cancel();
      const post = await fetch(`${url}/wmp`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'wmp.capability.list',
          params: { wmp: { version: '0.1', session_id: session.id } },
        }),
      });
      expect(((await post.json()) as { error: { code: number } }).error.code).toBe(-31000);
    }
    const resumed = await connectPeer(urls[1]!);
    await expect(
      resumed.request('wmp.session.resume', {
        wmp: { version: '0.1', sender: alice.did },
        session_id: session.id,
        resumption_token: resumption,
      }),
    ).rejects.toMatchObject({ code: -31000 });
    await resumed.close();
    await peer.close();
  });

  it('closes a group session on one node and another node, which served it from its copy, refuses it at once', async () => {
    const alice = await client(0);
    const bob = await client(1);
    const group = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bob.keypair.did],
      capabilities: CLIENT_CAPABILITIES,
    });
    await bob.peer.request('wmp.session.join', {
      wmp: { version: '0.1', sender: bob.keypair.did },
      session_id: group.id,
    });
    const say = (body: string) =>
      bob.peer.request('wmp.message.deliver', {
        wmp: { version: '0.1', session_id: group.id, sender: bob.keypair.did },
        body,
      });
    const fromCopy = async () => {
      const text = await (await fetch(`${urls[1]}/metrics`)).text();
      return Number(/^wmp_relay_session_cache_reads_total\{from="copy"\} (\d+)$/m.exec(text)?.[1]);
    };
    const before = await fromCopy();
    await say('one');
    await say('two');
    // Node b answered bob from its copy of the group's record (read once, kept).
    expect(await fromCopy()).toBeGreaterThan(before);

    await alice.peer.request('wmp.session.close', {
      wmp: { version: '0.1', session_id: group.id, sender: alice.keypair.did },
      reason: 'complete',
    });
    // The very next request on node b: its copy went with the close.
    await expect(say('after the close')).rejects.toMatchObject({ code: -31000 });
  });

  it('refuses a signed box request replayed against another node', async () => {
    const me = generateKeypair();
    // A key the box holds something of (an allow list): its requests' nonces are remembered.
    const allow = JSON.stringify({ contacts: [generateKeypair().multikey] });
    const put = await fetch(`${urls[2]}/ohan/v1/allow`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        authorization: await signRequest({
          signer: me,
          origin: cluster.publicUrl,
          method: 'PUT',
          target: '/ohan/v1/allow',
          body: allow,
        }),
      },
      body: allow,
    });
    expect(put.status).toBe(200);
    const target = '/ohan/v1/events?after=0&limit=10';
    // Signed for the cluster's public origin, which every node checks.
    const authorization = await signRequest({ signer: me, origin: cluster.publicUrl, method: 'GET', target });
    const first = await fetch(`${urls[0]}${target}`, { headers: { authorization } });
    expect(first.status).toBe(200);
    for (const url of [urls[1]!, urls[2]!, urls[0]!]) {
      const again = await fetch(`${url}${target}`, { headers: { authorization } });
      expect(again.status).toBe(401);
      expect(await again.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
  });
});

describe('sessions routed end to end across the nodes (transport §6.2)', () => {
  it('A on one node, B on another over HTTP+SSE: B answers, authenticates A, runs a flow, resolve and messages', async () => {
    const alice = await client(0);
    const bob = await client(1, 'http');
    const { bridge, received, session } = await openRoutedSession(alice, bob, { verifyResponder: true });
    expect(session.relayHosted).toBe(false);
    expect((await bridge.server.store.get(session.id))?.authenticated).toEqual([alice.keypair.did]);
    const steps: string[] = [];
    const flow = await session.startFlow('approval', {}, { onProgress: (step) => steps.push(step) });
    await expect.poll(() => steps).toEqual(['awaiting_review']);
    await session.request('wmp.flow.action', { flow_id: flow.flowId, action: 'approve' });
    await expect(flow.done).resolves.toEqual({ approved: true });
    await expect(session.request('wmp.resolve', { uri: 'wmp:b', type: 'endpoint' })).resolves.toMatchObject({
      metadata: { url: 'wss://b.example/wmp' },
    });
    await session.send([bob.keypair.did], { text: 'across nodes' });
    await expect.poll(() => received.map((m) => m.body)).toEqual([{ text: 'across nodes' }]);
    await session.close();
    await expect.poll(() => bridge.sessions.has(session.id)).toBe(false);
  });

  it('B’s node dies: A gets peer_offline, loses no acknowledged deliver, and B resumes on another node', async () => {
    const spare = await cluster.start('node-d');
    const alice = await client(0);
    const bob = await openClient(spare.url, 'ws');
    clients.push(bob);
    const { bridge, received, session } = await openRoutedSession(alice, bob);
    await expect(session.request('org.example.ping', { text: 'before' })).resolves.toMatchObject({ pong: 'before' });

    spare.child.kill('SIGKILL');
    await spare.exited;
    const offline = (await session.request('org.example.ping', { text: 'x' }).catch((e: unknown) => e)) as {
      data?: unknown;
    };
    expect(offline.data).toEqual({ reason: 'peer_offline' });
    // Acknowledged (stored) while B is away: it reaches B once B is back, on another node.
    const sent = (await session.send([bob.keypair.did], { text: 'while away' })) as { message_id: string };

    const back = await connectPeer(urls[2]!);
    await bob.session.resume(back);
    bridge.attach(back);
    await expect.poll(() => received.map((m) => m.wmp.message_id)).toEqual([sent.message_id]);
    await expect(session.request('org.example.ping', { text: 'after' })).resolves.toMatchObject({ pong: 'after' });
  });
});

describe('limits hold across the nodes', () => {
  let limited: TestCluster;
  let nodes: string[];
  const BURST = 30;
  beforeAll(async () => {
    limited = await startCluster('limits');
    // The cluster fixture's own limits are lifted; these come after and win.
    const args = ['--rate', '1', '--rate-burst', String(BURST), '--box-rate', '1', '--box-rate-burst', String(BURST)];
    // A box without a directory and with cheap stamps, for the stream test below.
    args.push('--relay-only', '--stranger-bits', '2');
    nodes = (await Promise.all(['l-a', 'l-b'].map((id) => limited.start(id, args)))).map((n) => n.url);
  }, 120_000);
  afterAll(() => limited?.destroy(), 60_000);

  it('an identity spreading its WMP requests over two nodes gets one budget, not two', async () => {
    const keypair = generateKeypair();
    const sessions = await Promise.all(
      nodes.map(async (url) => {
        const peer = await connectPeer(url);
        return { peer, session: await WmpSession.open(peer, { signer: keypair, capabilities: CLIENT_CAPABILITIES }) };
      }),
    );
    const outcomes: (string | number)[] = [];
    for (let i = 0; i < BURST; i++) {
      for (const { session } of sessions) {
        outcomes.push(
          await session.request('wmp.capability.list', {}).then(
            () => 'ok',
            (e: { code?: number }) => e.code ?? 'error',
          ),
        );
      }
    }
    const ok = outcomes.filter((o) => o === 'ok').length;
    // One bucket of BURST (plus what refills meanwhile, 1/s), where two nodes of their own give 2 x BURST.
    expect(ok).toBeLessThan(BURST + 15);
    expect(outcomes.filter((o) => o === -31007).length).toBeGreaterThan(BURST - 15);
    for (const { peer } of sessions) await peer.close();
  });

  it('a box key spreading its requests over two nodes gets one budget, not two', async () => {
    const me = generateKeypair();
    const statuses: number[] = [];
    for (let i = 0; i < BURST; i++) {
      for (const url of nodes) {
        const target = `/ohan/v1/events?after=0&limit=${1 + (i % 50)}`;
        const authorization = await signRequest({ signer: me, origin: limited.publicUrl, method: 'GET', target });
        statuses.push((await fetch(`${url}${target}`, { headers: { authorization } })).status);
      }
    }
    expect(statuses.filter((s) => s === 200).length).toBeLessThan(BURST + 15);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(BURST - 15);
  });

  it('wakes a box event stream on one node for an event published on another', async () => {
    const alice = generateKeypair();
    const bob = { signer: generateKeypair(), enc: generateEncKeypair() };
    const target = '/ohan/v1/events/stream';
    const authorization = await signRequest({ signer: bob.signer, origin: limited.publicUrl, method: 'GET', target });
    const stream = await fetch(`${nodes[1]}${target}`, { headers: { authorization } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil(': ready');

    const event = await createEvent({
      envelope: { jsonrpc: '2.0', method: 'wmp.message.deliver', params: { body: 'sealed' } },
      to: { key: bob.signer.multikey, enc: bob.enc.multikey },
      from: alice,
      stampBits: 2,
    });
    const published = await fetch(`${nodes[0]}/ohan/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    expect(published.status).toBe(202);
    // Published on node l-a, streamed from node l-b's open stream without a new request.
    await readUntil(event.id);
    await reader.cancel();
  });
});
