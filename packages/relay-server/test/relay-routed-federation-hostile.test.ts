// Issue 25 item 2, the other side: a session routed across two federated relays when the responder
// cannot answer (relay 1 hosts it), when the link between the relays drops (peer_offline), and
// against a peer or a third party that lies: relay 1 speaking for Bob or for someone not homed
// there, strangers and a third relay injecting into the route, answers naming a session id in use.
import { type Keypair, keypairFromSeed, relayChainWith } from '@wmp/jcs-signing';
import { type Peer, WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import { OFFERED, responderFor } from '../../../test-support/routed-parties.js';
import { type Client, codeOf, waitFor } from './fixtures/relay-clients.js';
import { linksUp, openRoute as openRouteOfPair, routedPair } from './fixtures/routed-federation.js';

const pair = routedPair();
const { bed } = pair;

/** Relay i's key (the pair's relays are seeded with i + 1). */
const relayKey = (i: number): Keypair => keypairFromSeed(new Uint8Array(32).fill(i + 1));

/** Alice at relay 1 opens a session routed to Bob at relay 2, who answers with a responder. */
async function openRoute(u1: string, u2: string) {
  const route = await openRouteOfPair(pair, u1, u2, { verifyResponder: true });
  expect(route.session.relayHosted).toBe(false);
  return route;
}

/** A frame on `session` from `peer`, naming `sender` (or none). */
function ping(peer: Pick<Peer, 'request'>, sessionId: string, sender: string | undefined) {
  return peer.request('org.example.ping', {
    wmp: { version: '0.1', session_id: sessionId, ...(sender ? { sender } : {}) },
    text: 'x',
  });
}

/** Holds every `org.example.ping` request that reaches `client` unanswered; counts them. */
function holdPings(client: Client): { readonly arrived: number } {
  const held = { arrived: 0 };
  client.peer.divert = (m) => {
    if (!('method' in m) || m.method !== 'org.example.ping') return false;
    held.arrived++;
    return true;
  };
  return held;
}

/** A create passed on as relay `i` would, for `sender`, with that relay's signed chain entry. */
async function createAsRelay(i: number, origin: string, sender: string, responder: string) {
  const key = relayKey(i);
  const message = {
    jsonrpc: '2.0' as const,
    method: 'wmp.session.create',
    params: { wmp: { version: '0.1', sender } as Record<string, unknown>, participants: [responder] },
  };
  message.params.wmp.relay_chain = await relayChainWith(message, {
    relay: `${origin}/wmp`,
    relayId: key.did,
    signer: key,
  });
  return message.params;
}

describe('a session routed across two relays: the fallbacks', () => {
  it('Bob offline at relay 2, or answering no sessions: relay 1 hosts the session and says so; relay 2 routes nothing', async () => {
    const [u1, u2] = await pair.setup();
    const alice = await bed.open(u1, { keypair: pair.alice });
    const offline = await WmpSession.open(alice.peer, { signer: alice.keypair, participants: [pair.bob.did] });
    expect(offline.relayHosted).toBe(true);
    expect(await bed.relays[0]!.stores.sessions.get(offline.id)).toMatchObject({
      participants: [pair.alice.did, pair.bob.did],
    });
    expect(await bed.relays[1]!.stores.sessions.get(offline.id)).toBeUndefined();
    // Bob online at relay 2 with a client that answers no sessions (-32601).
    await bed.open(u2, { keypair: pair.bob });
    const mailbox = await WmpSession.open(alice.peer, { signer: alice.keypair, participants: [pair.bob.did] });
    expect(mailbox.relayHosted).toBe(true);
    expect(await bed.relays[1]!.stores.sessions.get(mailbox.id)).toBeUndefined();
  });

  it('Bob does not answer: relay 2 gives up first (its offer timeout), and relay 1 hosts the session', async () => {
    const timings = { routeOfferTimeoutMs: 300 };
    const [u1, u2] = await pair.setup('ws', () => ({ timings }));
    const alice = await bed.open(u1, { keypair: pair.alice });
    const bob = await bed.open(u2, { keypair: pair.bob });
    let offered = 0;
    bob.peer.divert = (m) => 'method' in m && m.method === 'wmp.session.create' && ++offered > 0;
    const session = await WmpSession.open(alice.peer, { signer: alice.keypair, participants: [pair.bob.did] });
    expect(offered).toBe(1);
    expect(session.relayHosted).toBe(true);
  });

  it('the link drops with requests in flight either way: each sender hears peer_offline, and so does the next', async () => {
    const [u1, u2] = await pair.setup();
    const { alice, bob, bridge, session } = await openRoute(u1, u2);
    // Alice's request held by Bob, and Bob's request to Alice held by Alice.
    bridge.detach();
    const bobHeld = holdPings(bob);
    const toBob = ping(alice.peer, session.id, alice.keypair.did).catch((e: unknown) => e);
    const aliceHeld = holdPings(alice);
    const toAlice = ping(bob.peer, session.id, bob.keypair.did).catch((e: unknown) => e);
    await waitFor(() => bobHeld.arrived === 1 && aliceHeld.arrived === 1);
    // Relay 1's link to relay 2 goes down (relay 2 drops it).
    const r1 = bed.relays[0]!;
    const link = bed.relays[1]!.core.presence.newestRegistered(r1.id, Date.now())!;
    await link.connection.peer.close();
    expect(await toBob).toMatchObject({ code: -32603, data: { reason: 'peer_offline' } });
    expect(await toAlice).toMatchObject({ code: -32603, data: { reason: 'peer_offline' } });
    // Once it is back, the route passes frames again.
    await linksUp(u1);
    bob.peer.divert = undefined;
    bridge.attach(bob.peer);
    await expect(ping(alice.peer, session.id, alice.keypair.did)).resolves.toMatchObject({ pong: 'x' });
    // Relay 2 gone: peer_offline at once.
    await bed.stop(1);
    expect(await ping(alice.peer, session.id, alice.keypair.did).catch((e: unknown) => e)).toMatchObject({
      code: -32603,
      data: { reason: 'peer_offline' },
    });
  });
});

describe('a session routed across two relays: a route that ended at relay 2 only', () => {
  it("a deliver in relay 1's outbox for it is refused for good (-31000): Alice hears dropped, nothing is retried", async () => {
    const [u1, u2] = await pair.setup();
    const { alice, session } = await openRoute(u1, u2);
    // Relay 2 ended the route while its close could not reach relay 1 (its link was down, say).
    await bed.relays[1]!.stores.sessions.delete(session.id);
    const { message_id } = (await session.send([pair.bob.did], { text: 'too late' })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.message_id === message_id && s.status === 'dropped'), 20_000);
    expect(alice.statuses.find((s) => s.message_id === message_id)).toMatchObject({
      status: 'dropped',
      reason: 'peer_refused',
      data: { code: -31000 },
    });
    await expect.poll(async () => (await bed.relays[0]!.stores.queue.stats(`relay:${u2}`)).count).toBe(0);
  });
});

describe('a session routed across two relays: sender binding across hops', () => {
  it('relay 1 may speak for Alice on the route, never for Bob; nothing passes', async () => {
    const [u1, u2] = await pair.setup();
    const { alice, session } = await openRoute(u1, u2);
    // A connection of relay 1 (its key) at relay 2, besides its link: a relay that lies.
    const liar = await bed.open(u2, { keypair: relayKey(0), register: false });
    const reached = holdPings(alice);
    expect(await codeOf(ping(liar.peer, session.id, pair.bob.did))).toBe(-31002);
    expect(reached.arrived).toBe(0);
    // Relay 2 (over relay 1's link) may speak for Bob, never for Alice.
    const link = bed.relays[1]!.core.presence.newestRegistered(bed.relays[0]!.id, Date.now())!;
    expect(await codeOf(ping(link.connection.peer, session.id, pair.alice.did))).toBe(-31002);
    expect(reached.arrived).toBe(0);
    void ping(link.connection.peer, session.id, pair.bob.did).catch(() => undefined);
    await waitFor(() => reached.arrived === 1);
    // Over relay 1's link, relay 2 reaches only the routes it is on: not a route between two of
    // relay 1's users, not a hop session.
    const carol = await bed.open(u1);
    await responderFor(carol.keypair, carol.peer);
    const local = await WmpSession.open(alice.peer, {
      signer: alice.keypair,
      participants: [carol.keypair.did],
      capabilities: OFFERED,
    });
    expect(local.relayHosted).toBe(false);
    expect(await codeOf(ping(link.connection.peer, local.id, carol.keypair.did))).toBe(-31002);
    expect(await codeOf(ping(link.connection.peer, alice.session.id, pair.alice.did))).toBe(-31000);
  });

  it('relay 1 passing on a create for Bob (registered at relay 2) or for someone not homed at relay 1: -31002, nothing offered', async () => {
    const [u1, u2] = await pair.setup();
    const bob = await bed.open(u2, { keypair: pair.bob });
    const { bridge } = await responderFor(bob.keypair, bob.peer);
    const liar = await bed.open(u2, { keypair: relayKey(0), register: false });
    const refused = async (params: Record<string, unknown>) =>
      (await liar.peer.request('wmp.session.create', params).catch((e: unknown) => e)) as {
        code: number;
        data: { reason: string };
      };
    expect(await refused(await createAsRelay(0, u1, pair.bob.did, pair.alice.did))).toMatchObject({
      code: -31002,
      data: { reason: 'sender_homed_here' },
    });
    const stranger = keypairFromSeed(new Uint8Array(32).fill(9)).did;
    expect(await refused(await createAsRelay(0, u1, stranger, pair.bob.did))).toMatchObject({
      code: -31002,
      data: { reason: 'peer_may_not_speak_for_sender' },
    });
    // A chain whose last hop is not the peer's; one that holds relay 2 already (a loop).
    expect(await refused(await createAsRelay(2, u1, pair.alice.did, pair.bob.did))).toMatchObject({
      code: -31002,
      data: { reason: 'chain_not_from_peer' },
    });
    expect(await refused(await createAsRelay(1, u2, pair.alice.did, pair.bob.did))).toMatchObject({
      code: -32600,
      data: { reason: 'relay_loop' },
    });
    expect(bridge.sessions.size).toBe(0);
    // Relay 1 passing on Alice's create (her home, by relay 2's route) is offered to Bob.
    const answer = (await liar.peer.request(
      'wmp.session.create',
      await createAsRelay(0, u1, pair.alice.did, pair.bob.did),
    )) as { wmp: { session_id: string; relay_hosted?: boolean } };
    expect(answer.wmp.relay_hosted).toBeUndefined();
    expect(bridge.sessions.has(answer.wmp.session_id)).toBe(true);
  });

  it('strangers at either relay and a third relay cannot inject into the route (-31002), Alice and Bob still can', async () => {
    const [u1, u2, u3] = await bed.setup(3, (i, urls) => ({
      identity: { seed: new Uint8Array(32).fill(i + 1) },
      federation: {
        peers: i === 1 ? [urls[0]!, urls[2]!] : [urls[1]!],
        routes: i === 0 ? [{ pattern: pair.bob.did, url: urls[1]! }] : [{ pattern: pair.alice.did, url: urls[0]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    }));
    await Promise.all([u1!, u2!, u3!].map(linksUp));
    const { alice, bob, session } = await openRoute(u1!, u2!);
    const mallory1 = await bed.open(u1!);
    const mallory2 = await bed.open(u2!);
    // Relay 3 is a configured peer of relay 2, but not on this route.
    const relay3 = await bed.open(u2!, { keypair: relayKey(2), register: false });
    for (const peer of [mallory1.peer, mallory2.peer, relay3.peer]) {
      for (const sender of [pair.alice.did, pair.bob.did, undefined]) {
        expect(await codeOf(ping(peer, session.id, sender))).toBe(-31002);
      }
    }
    await expect(ping(alice.peer, session.id, pair.alice.did)).resolves.toMatchObject({ pong: 'x' });
    expect(bob.peer.closed).toBe(false);
  });

  it('an answer naming a session id in use at relay 2, or at relay 1: Alice hears session_id_in_use, nothing is routed', async () => {
    const [u1, u2] = await pair.setup();
    const alice = await bed.open(u1, { keypair: pair.alice });
    const bob = await bed.open(u2, { keypair: pair.bob });
    let answerWith = bob.session.id;
    bob.peer.divert = (message) => {
      if (!('method' in message) || message.method !== 'wmp.session.create' || !('id' in message)) return false;
      void bob.peer.send({
        jsonrpc: '2.0',
        id: message.id,
        result: { wmp: { version: '0.1', session_id: answerWith }, capabilities: {} },
      });
      return true;
    };
    const create = () =>
      alice.peer
        .request('wmp.session.create', {
          wmp: { version: '0.1', sender: pair.alice.did },
          participants: [pair.bob.did],
        })
        .catch((e: unknown) => e);
    // Bob's own hop session id at relay 2.
    expect(await create()).toMatchObject({ code: -32603, data: { reason: 'session_id_in_use' } });
    expect(await bed.relays[0]!.stores.sessions.get(bob.session.id)).toBeUndefined();
    // Alice's hop session id at relay 1: relay 2 took it, relay 1 refuses it and relay 2 forgets it.
    answerWith = alice.session.id;
    expect(await create()).toMatchObject({ code: -32603, data: { reason: 'session_id_in_use' } });
    await expect.poll(async () => bed.relays[1]!.stores.sessions.get(alice.session.id)).toBeUndefined();
    await expect(alice.session.request('wmp.capability.list', {})).resolves.toBeDefined();
    await expect(bob.session.request('wmp.capability.list', {})).resolves.toBeDefined();
  });
});

describe('a session routed across two relays: the bounds on what a peer passes', () => {
  it('requests in flight per route hold for what relay 1 passes to relay 2', async () => {
    const [u1, u2] = await pair.setup('ws', (i) => (i === 1 ? { limits: { maxForwardedPerRoute: 1 } } : {}));
    const { bob, bridge, session } = await openRoute(u1, u2);
    bridge.detach();
    const held = holdPings(bob);
    void session.request('org.example.ping', { text: '1' }).catch(() => undefined);
    await waitFor(() => held.arrived === 1);
    expect(await session.request('org.example.ping', { text: '2' }).catch((e: unknown) => e)).toMatchObject({
      code: -31007,
      data: { reason: 'too many requests in flight on this session' },
    });
  });

  it('requests in flight per peer relay hold for all its users together', async () => {
    const [u1, u2] = await pair.setup('ws', (i) => (i === 1 ? { limits: { maxForwardedPerPeer: 2 } } : {}));
    const first = await openRoute(u1, u2);
    // A second route from relay 1 to Bob (Alice's second session).
    const second = await WmpSession.open(first.alice.peer, {
      signer: first.alice.keypair,
      participants: [pair.bob.did],
      capabilities: OFFERED,
    });
    expect(second.relayHosted).toBe(false);
    first.bridge.detach();
    const held = holdPings(first.bob);
    void first.session.request('org.example.ping', { text: '1' }).catch(() => undefined);
    void second.request('org.example.ping', { text: '2' }).catch(() => undefined);
    await waitFor(() => held.arrived === 2);
    expect(await first.session.request('org.example.ping', { text: '3' }).catch((e: unknown) => e)).toMatchObject({
      code: -31007,
      data: { reason: 'too many requests in flight with this peer' },
    });
  });

  it.each([
    ['routes per peer relay (all its users together)', { maxRoutesPerPeer: 1 }],
    ["routes per identity (a peer's user)", { maxRoutesPerIdentity: 1 }],
  ])('%s hold at relay 2: past them, relay 1 hosts the session', async (_name, limits) => {
    const [u1, u2] = await pair.setup('ws', (i) => (i === 1 ? { limits } : {}));
    const { alice } = await openRoute(u1, u2);
    const second = await WmpSession.open(alice.peer, { signer: alice.keypair, participants: [pair.bob.did] });
    expect(second.relayHosted).toBe(true);
    expect(await bed.relays[1]!.stores.sessions.get(second.id)).toBeUndefined();
  });

  it("a peer's creates spend the peer's budget, not the session-open rate of one connection", async () => {
    const slow = { limits: { sessionOpensPerSecond: 1, sessionOpenBurst: 1 } };
    const [u1, u2] = await pair.setup('ws', (i) => (i === 1 ? slow : {}));
    const { alice } = await openRoute(u1, u2);
    for (let n = 0; n < 3; n++) {
      const more = await WmpSession.open(alice.peer, {
        signer: alice.keypair,
        participants: [pair.bob.did],
        capabilities: OFFERED,
      });
      expect(more.relayHosted).toBe(false);
    }
  });
});
