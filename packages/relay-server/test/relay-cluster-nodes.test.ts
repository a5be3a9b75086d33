import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { HttpClientTransport } from '@wmp/transports/node';
import { describe, expect, it } from 'vitest';
import { cluster } from './fixtures/cluster-nodes.js';
import { CLIENT_CAPABILITIES, codeOf, collect, disconnect, openClient } from './fixtures/relay-clients.js';

describe('a relay of several nodes (one store, one coordination)', () => {
  it('delivers live to a recipient on another node, and the sender hears delivered once', async () => {
    const { cluster: c, clients } = await cluster(2);
    const alice = await openClient(c.urls[0]!);
    const bob = await openClient(c.urls[1]!);
    clients.push(alice, bob);

    const sent = (await alice.session.send([bob.keypair.did], { hello: 'bob' })) as { message_id: string };
    await expect.poll(() => bob.inbox.length).toBe(1);
    expect(bob.inbox[0]).toMatchObject({ body: { hello: 'bob' }, wmp: { sender: alice.keypair.did } });
    // Written on node 1, reported to the sender on node 0: one terminal status.
    await expect.poll(() => alice.statuses.some((s) => s.status === 'delivered')).toBe(true);
    const about = alice.statuses.filter((s) => s.message_id === sent.message_id);
    // Bob was online, on another node: no `queued` either.
    expect(about).toEqual([expect.objectContaining({ status: 'delivered', recipient: bob.keypair.did })]);
    // It came live from node 1 through the coordination: nothing was kept in Alice's queue for it.
    expect(await c.store.queue.stats(alice.keypair.did)).toMatchObject({ count: 0 });
    // Both nodes are one relay: one relay_id in the chain.
    expect(bob.inbox[0]!.wmp.relay_chain[0].relay_id).toBe(c.nodes[0]!.id);
    expect(c.nodes[1]!.id).toBe(c.nodes[0]!.id);
  });

  it('queues for a recipient who is offline and hands it over on whichever node it comes back', async () => {
    const { cluster: c, clients } = await cluster(3);
    const alice = await openClient(c.urls[0]!);
    const bob = await openClient(c.urls[1]!);
    clients.push(alice, bob);
    await disconnect(c.nodes[1]!, bob);
    await alice.session.send([bob.keypair.did], 'while away');
    await expect.poll(() => alice.statuses.map((s) => s.status)).toContain('queued');

    // Bob resumes on a third node: the registration and the backlog follow him there.
    const peer = new Peer(new HttpClientTransport({ endpoint: `${c.urls[2]}/wmp`, events: true }));
    await peer.start();
    await bob.session.resume(peer);
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual(['while away']);
    await expect.poll(() => alice.statuses.map((s) => s.status)).toContain('delivered');
    // Live again, on node 2, for what alice sends next from node 0.
    await alice.session.send([bob.keypair.did], 'now');
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual(['while away', 'now']);
    await peer.close();
  });

  it('carries an HTTP session begun on one node on another, bound to its identity', async () => {
    const { cluster: c, clients } = await cluster(2);
    const bob = await openClient(c.urls[0]!);
    clients.push(bob);
    const transport = new HttpClientTransport({ endpoint: `${c.urls[0]}/wmp` });
    const peer = new Peer(transport);
    await peer.start();
    const alice = generateKeypair();
    const session = await WmpSession.open(peer, { signer: alice, capabilities: CLIENT_CAPABILITIES });
    const statuses = collect(session).statuses;
    await session.request('wmp.relay.register', {});

    // The next request goes to the other node (no sticky sessions): same session, same sender.
    const moved = new HttpClientTransport({
      endpoint: `${c.urls[1]}/wmp`,
      sessionId: session.id,
      sessionToken: transport.sessionToken!,
      events: true,
    });
    const frames: string[] = [];
    moved.onmessage = (f) => frames.push(typeof f === 'string' ? f : new TextDecoder().decode(f));
    await moved.start();
    await moved.send({
      jsonrpc: '2.0',
      id: 'x1',
      method: 'wmp.message.deliver',
      params: { wmp: { version: '0.1', session_id: session.id }, to: [bob.keypair.did], body: 'via node 1' },
    });
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual(['via node 1']);
    expect(bob.inbox[0]!.wmp.sender).toBe(alice.did);
    // Its event stream on node 1 now carries what is routed to alice.
    await bob.session.send([alice.did], 'back to alice');
    await expect.poll(() => frames.some((f) => f.includes('back to alice'))).toBe(true);
    expect(statuses.every((s) => s.status !== 'dropped')).toBe(true);
    await moved.close();
    await peer.close();
  });

  it('carries the group sessions a participant joined, on another node, with its HTTP session', async () => {
    const { cluster: c, clients } = await cluster(2);
    const alice = await openClient(c.urls[0]!);
    clients.push(alice);
    const bobKey = generateKeypair();
    const group = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [bobKey.did],
      capabilities: CLIENT_CAPABILITIES,
    });
    const aliceGot: Record<string, any>[] = [];
    group.on('message', (m) => aliceGot.push(m));

    // Bob over HTTP on node 0: his hop session, then the group joined on the same HTTP session.
    const transport = new HttpClientTransport({ endpoint: `${c.urls[0]}/wmp` });
    const peer = new Peer(transport);
    await peer.start();
    const hop = await WmpSession.open(peer, { signer: bobKey, capabilities: CLIENT_CAPABILITIES });
    await peer.request('wmp.session.join', { wmp: { version: '0.1', sender: bobKey.did }, session_id: group.id });

    // His next POST lands on node 1: the token carries the hop session, and the group he joined
    // comes with it when he writes to it (what a join would bind anyway); a stranger's does not.
    const moved = new HttpClientTransport({
      endpoint: `${c.urls[1]}/wmp`,
      sessionId: hop.id,
      sessionToken: transport.sessionToken!,
    });
    const answers: Record<string, any>[] = [];
    moved.onmessage = (f) => answers.push(JSON.parse(typeof f === 'string' ? f : new TextDecoder().decode(f)));
    await moved.start();
    const deliver = (id: string, session: string, body: string) =>
      moved.send({
        jsonrpc: '2.0',
        id,
        method: 'wmp.message.deliver',
        params: { wmp: { version: '0.1', session_id: session, sender: bobKey.did }, body },
      });
    await deliver('g1', group.id, 'to the group, via node 1');
    await expect.poll(() => aliceGot.map((m) => m.body)).toEqual(['to the group, via node 1']);
    // Alice is online (on node 0): the answer says it is being forwarded, not queued.
    expect(answers.find((a) => a.id === 'g1')).toMatchObject({ result: { status: 'accepted' } });

    const other = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [generateKeypair().did],
      capabilities: CLIENT_CAPABILITIES,
    });
    await deliver('g2', other.id, 'not my group');
    await expect.poll(() => answers.find((a) => a.id === 'g2')).toMatchObject({ error: { code: -31002 } });
    await moved.close();
    await peer.close();
  });

  it('shares rate windows: a client gains nothing by spreading its requests over nodes', async () => {
    const burst = 40;
    const { cluster: c, clients } = await cluster(2, { limits: { requestsPerSecond: 1, requestBurst: burst } });
    const keypair = generateKeypair();
    const one = await openClient(c.urls[0]!, { keypair });
    const two = await openClient(c.urls[1]!, { keypair });
    clients.push(one, two);
    const results: unknown[] = [];
    for (let i = 0; i < burst; i++) {
      results.push(await codeOf(one.session.request('wmp.capability.list', {})));
      results.push(await codeOf(two.session.request('wmp.capability.list', {})));
    }
    const ok = results.filter((r) => r === 'ok').length;
    // One bucket for the identity on both nodes: about `burst` in all (a few refill meanwhile).
    expect(ok).toBeLessThan(burst + 10);
    expect(results.filter((r) => r === -31007).length).toBeGreaterThan(burst - 10);
  });
});
