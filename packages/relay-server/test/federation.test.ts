import { generateKeypair, verifyRelayChain } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { federationTestbed } from './fixtures/federation.js';
import { asMessage, waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();

describe('federation: two relays, peers of each other', () => {
  it('delivers live across the relays with a two-entry chain that verifies hop by hop', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    // Each relay routes the other's user there: relay 2 resolves Alice's home to relay 1.
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob.did : aliceKey.did, url: urls[1 - i]! }],
      },
    }));
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const b = await bed.open(u2!, { keypair: bob });
    const result = (await alice.session.send([bob.did], { hi: 'bob' })) as { message_id: string };
    await waitFor(() => b.inbox.length === 1);
    const got = b.inbox[0]!;
    expect(got.body).toEqual({ hi: 'bob' });
    expect(got.wmp.sender).toBe(alice.keypair.did);
    expect(got.wmp.message_id).toBe(result.message_id);
    const chain = got.wmp.relay_chain as Array<{ relay_id: string; signature?: string }>;
    expect(chain.map((e) => e.relay_id)).toEqual([bed.relays[0]!.id, bed.relays[1]!.id]);
    // Relay 1 signed its entry before the message left for relay 2 (which verified it); relay 2
    // hands it to Bob on his own connection and leaves its entry unsigned (`when-needed`).
    expect(chain.map((e) => e.signature !== undefined)).toEqual([true, false]);
    expect(await verifyRelayChain(asMessage(got), { allowUnsigned: true })).toBe(2);
    await expect(verifyRelayChain(asMessage(got))).rejects.toMatchObject({ data: { reason: 'missing', hop: 1 } });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'));
    const delivered = alice.statuses.filter((s) => s.status === 'delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ message_id: result.message_id, recipient: bob.did });
  });
});

/** Two relays routing each other's users (static routes both ways), peers of each other. */
async function twoRelays(alice: string, bob: string, extra: (i: number) => Record<string, unknown> = () => ({})) {
  return bed.setup(2, (i, urls) => ({
    identity: { seed: new Uint8Array(32).fill(i + 1) },
    federation: {
      peers: [urls[1 - i]!],
      routes: [{ pattern: i === 0 ? bob : alice, url: urls[1 - i]! }],
      timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
    },
    ...extra(i),
  }));
}

describe('federation: store and forward', () => {
  it('Bob offline: queued at relay 2, `queued` reaches Alice, then `delivered` once Bob registers', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(aliceKey.did, bob.did);
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const { message_id } = (await alice.session.send([bob.did], { n: 1 })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'queued'));
    expect(alice.statuses[0]).toMatchObject({ message_id, status: 'queued', recipient: bob.did });
    expect((await bed.relays[1]!.stores.queue.stats(bob.did)).count).toBe(1);
    const b = await bed.open(u2!, { keypair: bob });
    await waitFor(() => b.inbox.length === 1 && alice.statuses.some((s) => s.status === 'delivered'));
    expect(b.inbox[0]!.wmp.message_id).toBe(message_id);
    expect(alice.statuses.filter((s) => s.status === 'delivered')).toHaveLength(1);
  });

  it('relay 2 down: the message waits in relay 1 outbox and is delivered once relay 2 is back', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, u2] = await twoRelays(aliceKey.did, bob.did);
    const alice = await bed.open(u1!, { keypair: aliceKey });
    await bed.stop(1);
    const result = (await alice.session.send([bob.did], { n: 2 })) as { message_id: string; status: string };
    expect(result.status).toBe('queued');
    const outbox = `relay:${u2}`;
    expect((await bed.relays[0]!.stores.queue.stats(outbox)).count).toBe(1);
    await expect.poll(async () => (await (await fetch(`${u1}/health`)).json()).peers_down).toEqual([u2]);
    await bed.start(1);
    await waitFor(async () => (await bed.relays[1]!.stores.queue.stats(bob.did)).count === 1, 20_000);
    await waitFor(async () => (await bed.relays[0]!.stores.queue.stats(outbox)).count === 0);
    const b = await bed.open(u2!, { keypair: bob });
    await waitFor(() => b.inbox.length === 1 && alice.statuses.some((s) => s.status === 'delivered'));
    expect(b.inbox[0]!.wmp.message_id).toBe(result.message_id);
  });

  it('routes a domain-identified recipient through a loopback well-known document', async () => {
    const aliceKey = generateKeypair();
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      federation: { peers: [urls[1 - i]!], routes: i === 1 ? [{ pattern: aliceKey.did, url: urls[0]! }] : [] },
    }));
    // did:web names its host (a port as %3A): relay 2's well-known names relay 2.
    const recipient = `did:web:${new URL(u2!).host.replace(':', '%3A')}:bob`;
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const resolved = await alice.session.request('ohan.relay.resolve', { identity: recipient });
    expect(resolved).toMatchObject({ identity: recipient, home: u2, source: 'well-known' });
    await alice.session.send([recipient], { n: 3 });
    await waitFor(() => alice.statuses.some((s) => s.status === 'queued'));
    expect(alice.statuses[0]).toMatchObject({ recipient });
    expect((await bed.relays[1]!.stores.queue.stats(recipient)).count).toBe(1);
  });
});

describe('federation: lines and loops', () => {
  it('three relays in a line (1 -> 2 -> 3 by static routes): a three-entry chain, statuses back to Alice', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const [u1, , u3] = await bed.setup(3, (i, urls) => ({
      federation: {
        // Each relay takes from its neighbours; 3 trusts 2 to speak for Alice (2 is not her home).
        peers: urls.filter((_, j) => Math.abs(i - j) === 1),
        routes: [
          ...(i < 2 ? [{ pattern: bob.did, url: urls[i + 1]! }] : []),
          ...(i > 0 ? [{ pattern: aliceKey.did, url: urls[i - 1]! }] : []),
        ],
        trustedPeers: i === 2 ? [urls[1]!] : [],
      },
    }));
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const b = await bed.open(u3!, { keypair: bob });
    await alice.session.send([bob.did], { n: 4 });
    await waitFor(() => b.inbox.length === 1);
    const signed = (b.inbox[0]!.wmp.relay_chain as Array<{ signature?: string }>).map((e) => e.signature !== undefined);
    expect(signed).toEqual([true, true, false]);
    expect(await verifyRelayChain(asMessage(b.inbox[0]!), { allowUnsigned: true })).toBe(3);
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'));
  });

  it('a routing loop (1 -> 2 -> 1) is refused: the message comes back to Alice as dropped, stored nowhere', async () => {
    const aliceKey = generateKeypair();
    const nobody = generateKeypair().did;
    const [u1] = await bed.setup(2, (i, urls) => ({
      federation: {
        peers: [urls[1 - i]!],
        routes: [
          { pattern: nobody, url: urls[1 - i]! },
          ...(i === 1 ? [{ pattern: aliceKey.did, url: urls[0]! }] : []),
        ],
      },
    }));
    const alice = await bed.open(u1!, { keypair: aliceKey });
    await alice.session.send([nobody], { n: 5 });
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped'));
    expect(alice.statuses.find((s) => s.status === 'dropped')).toMatchObject({ recipient: nobody });
    await expect.poll(() => bed.relays[0]!.core.federation!.metrics.refusedInByReason.get('relay_loop')).toBe(1);
    for (const r of bed.relays) expect((await r!.stores.queue.totals()).count).toBe(0);
  });
});

describe('federation: ERDS checks before forwarding', () => {
  it("refuses what the downstream's well-known erds does not list with -31005 data.unsupported, nothing stored", async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const erds = { consignment_modes: ['basic'], assurance_levels: ['low', 'high'], supported_policies: ['urn:p:1'] };
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob.did : aliceKey.did, url: urls[1 - i]! }],
        ...(i === 1 ? { erds } : {}),
      },
    }));
    // What relay 2 serves, as it enforces it: the lists it was given, delegation and scheduled delivery on, its evidence repository.
    expect((await (await fetch(`${u2}/.well-known/wmp-configuration`)).json()).erds).toEqual({
      ...erds,
      delegation: true,
      scheduled_delivery: true,
      evidence_repository: `${u2}/evidence`,
      evidence_retention: 'P5Y',
    });
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const b = await bed.open(u2!, { keypair: bob });
    const refused = await alice.session
      .request('wmp.message.deliver', {
        to: [bob.did],
        body: {},
        consignment_mode: 'consented',
        applicable_policies: ['urn:p:1', 'urn:p:2'],
      })
      .then(
        () => undefined,
        (e: { code: number; data: unknown }) => e,
      );
    expect(refused?.code).toBe(-31005);
    expect(refused?.data).toMatchObject({ unsupported: ['consignment_mode', 'applicable_policies'] });
    expect((await bed.relays[0]!.stores.queue.totals()).count).toBe(0);
    await alice.session.request('wmp.message.deliver', {
      to: [bob.did],
      body: { ok: true },
      consignment_mode: 'basic',
      recipient_assurance_level: 'low',
    });
    await waitFor(() => b.inbox.length === 1);
    expect(b.inbox[0]!.body).toEqual({ ok: true });
  });
});
