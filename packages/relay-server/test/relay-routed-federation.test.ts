// Issue 25 item 2: a session routed end to end across two federated relays. Alice is at relay 1,
// Bob is homed at relay 2: relay 1 offers Alice's create over its link to relay 2, which offers it
// to Bob; Bob answers, authenticates Alice, runs a flow, resolve and a method relay 1 does not know,
// deliveries go both ways through the outboxes with both relays' chain entries, and close ends the
// route at both relays.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyRelayChain } from '@wmp/jcs-signing';
import { afterAll, describe, expect, it } from 'vitest';
import { deliverToInitiator, expectResponderAnswers } from '../../../test-support/routed-parties.js';
import type { RelayConfig } from '../src/node.js';
import { SqliteStore } from '../src/sqlite.js';
import { asMessage, type Binding, connectPeer, waitFor } from './fixtures/relay-clients.js';
import { linksUp, openRoute, routedPair } from './fixtures/routed-federation.js';

const pair = routedPair();
const { bed } = pair;
const dir = mkdtempSync(join(tmpdir(), 'wmp-routed-federation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each<[Binding, Binding, Binding]>([
  ['ws', 'ws', 'ws'],
  ['http', 'http', 'http'],
  ['ws', 'http', 'http'],
  ['http', 'ws', 'ws'],
])('a session routed across two federated relays (A on %s, B on %s, the links on %s)', (aBinding, bBinding, link) => {
  it('B answers the create, authenticates A, runs a flow, resolve, its own method, deliveries both ways and close', async () => {
    const [u1, u2] = await pair.setup(link);
    const { alice, bob, bridge, received, session } = await openRoute(pair, u1, u2, {
      aBinding,
      bBinding,
      verifyResponder: true,
    });
    expect(session.relayHosted).toBe(false);
    expect(session.responder).toBe(bob.keypair.did);
    expect((await bridge.server.store.get(session.id))?.authenticated).toEqual([alice.keypair.did]);
    // Both relays hold the route: relay 1 reaches Bob over its link, relay 2 reaches Alice over relay 1's.
    const [r1, r2] = [bed.relays[0]!, bed.relays[1]!];
    expect(await r1.stores.sessions.get(session.id)).toMatchObject({
      route: { initiator: alice.keypair.did, responder: bob.keypair.did, responderVia: { link: u2, relayId: r2.id } },
    });
    expect(await r2.stores.sessions.get(session.id)).toMatchObject({
      route: { initiator: alice.keypair.did, responder: bob.keypair.did, initiatorVia: { peer: r1.id, origin: u1 } },
    });

    await expectResponderAnswers(session);

    // A to B: stored at relay 1 (its outbox to relay 2), then at relay 2, naming the routed session.
    const sent = (await session.send([bob.keypair.did], { text: 'to B' })) as { message_id: string };
    await waitFor(() => received.length === 1, 20_000);
    expect(received[0]).toMatchObject({
      body: { text: 'to B' },
      wmp: { sender: alice.keypair.did, message_id: sent.message_id, session_id: session.id },
    });
    const toB = received[0] as unknown as Record<string, unknown>;
    expect((toB.wmp as { relay_chain: { relay_id: string }[] }).relay_chain.map((e) => e.relay_id)).toEqual([
      r1.id,
      r2.id,
    ]);
    // Relay 1 signed its entry (it left for a peer); relay 2 left its own unsigned (a recipient here).
    expect(await verifyRelayChain(asMessage(toB), { allowUnsigned: true })).toBe(2);
    // What relay 2 stored is acknowledged to relay 2.
    await waitFor(async () => (await r2.stores.queue.stats(bob.keypair.did)).count === 1);
    await bob.peer.notify('wmp.message.ack', {
      wmp: { version: '0.1', session_id: session.id, sender: bob.keypair.did },
      message_ids: [sent.message_id],
      status: 'received',
    });
    await expect.poll(async () => (await r2.stores.queue.stats(bob.keypair.did)).count).toBe(0);
    // Relay 2's `delivered` comes back to Alice's hop connection, once.
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'), 20_000);
    expect(alice.statuses.filter((s) => s.status === 'delivered')).toEqual([
      expect.objectContaining({ message_id: sent.message_id, recipient: bob.keypair.did }),
    ]);

    // B to A on the same session: through relay 2's outbox to relay 1, with both entries.
    const toA = await deliverToInitiator(bridge, session, alice.keypair.did, { text: 'to A' }, 20_000);
    expect(toA).toMatchObject({ body: { text: 'to A' }, wmp: { sender: bob.keypair.did, session_id: session.id } });
    expect((toA.wmp as { relay_chain: { relay_id: string }[] }).relay_chain.map((e) => e.relay_id)).toEqual([
      r2.id,
      r1.id,
    ]);

    await session.close();
    await waitFor(() => !bridge.sessions.has(session.id));
    expect(await r1.stores.sessions.get(session.id)).toBeUndefined();
    expect(await r2.stores.sessions.get(session.id)).toBeUndefined();
  });
});

describe('a session routed across two relays: the responder closes it', () => {
  it("Bob's close ends the route at relay 2 and, over relay 1's link, at relay 1; Alice hears it", async () => {
    const [u1, u2] = await pair.setup();
    const { bridge, session } = await openRoute(pair, u1, u2);
    const ended: unknown[] = [];
    session.on('notification', (n) => {
      if (n.method === 'wmp.session.close') ended.push(n);
    });
    await bridge.server.closeSession(session.id);
    await waitFor(() => ended.length === 1);
    expect(await bed.relays[1]!.stores.sessions.get(session.id)).toBeUndefined();
    expect(await bed.relays[0]!.stores.sessions.get(session.id)).toBeUndefined();
    // The relay knows the session no more (a method it knows, so that the session is what is refused).
    expect(await session.request('wmp.capability.list', {}).catch((e: unknown) => e)).toMatchObject({ code: -31000 });
  });
});

describe.each([
  ["relay 1 (the initiator's)", 0],
  ["relay 2 (the responder's)", 1],
])('a session routed across two relays and a restart of %s (SQLite)', (_name, restarted) => {
  it('survives: the party there resumes its hop session, the links come back, frames pass both ways with no new create', async () => {
    const sqlite = (path: string): RelayConfig => ({ store: (limits) => SqliteStore.open({ path, ...limits }) });
    const stores = [sqlite(join(dir, `${restarted}-relay-1.db`)), sqlite(join(dir, `${restarted}-relay-2.db`))];
    const [u1, u2] = await pair.setup('ws', (i) => stores[i]!);
    const { alice, bob, bridge, session } = await openRoute(pair, u1, u2);
    await expect(session.request('org.example.ping', { text: 'before' })).resolves.toMatchObject({ pong: 'before' });

    await bed.stop(restarted);
    await bed.start(restarted);
    const moved = await connectPeer(restarted === 0 ? u1 : u2);
    if (restarted === 0) {
      await alice.session.resume(moved);
      session.attach(moved);
    } else {
      await bob.session.resume(moved);
      bridge.attach(moved);
    }
    // Relay 1's link to relay 2 is up again (relay 2 sees it registered).
    const [r1, r2] = [bed.relays[0]!, bed.relays[1]!];
    await waitFor(async () => r2.core.presence.newestRegistered(r1.id, Date.now()) !== undefined, 20_000);
    await linksUp(u1);

    await expect(session.request('org.example.ping', { text: 'after' })).resolves.toMatchObject({ pong: 'after' });
    await deliverToInitiator(bridge, session, alice.keypair.did, { text: 'after the restart' }, 20_000);
    await moved.close();
  });
});
