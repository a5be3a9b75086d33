import { createServer, type Server } from 'node:http';
import { generateKeypair, type Keypair, relayChainWith, signMessage } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import { federationTestbed } from '../fixtures/federation.js';
import { type Client, codeOf, waitFor } from '../fixtures/relay-clients.js';

const bed = federationTestbed();
let wellKnown: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (wellKnown ? wellKnown.close(() => r()) : r()));
  wellKnown = undefined;
});

/** A configured peer of the relay that is really a hostile client: its well-known names its key. */
async function hostilePeer(): Promise<{ key: Keypair; origin: string }> {
  const key = generateKeypair();
  wellKnown = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ relay_id: key.did, endpoints: {} }));
  });
  await new Promise<void>((r) => wellKnown!.listen(0, '127.0.0.1', () => r()));
  return { key, origin: `http://127.0.0.1:${(wellKnown.address() as { port: number }).port}` };
}

/** A forwarded deliver as the hostile peer builds it: `wmp.sender` someone else, its chain entry. */
async function forwarded(
  peer: Keypair,
  origin: string,
  sender: string,
  to: string,
  earlier: unknown[] = [],
  extra: Record<string, unknown> = {},
) {
  const message = {
    jsonrpc: '2.0' as const,
    method: 'wmp.message.deliver',
    params: {
      to: [to],
      body: { evil: true },
      wmp: { sender, message_id: `msg-${Math.random().toString(36).slice(2)}`, relay_chain: earlier, ...extra },
    },
  };
  const chain = await relayChainWith(message, { relay: `${origin}/wmp`, relayId: peer.did, signer: peer });
  message.params.wmp.relay_chain = chain;
  return message;
}

async function setup(timings: Record<string, number> = {}) {
  const peer = await hostilePeer();
  const [url] = await bed.setup(1, () => ({ federation: { peers: [peer.origin], timings } }));
  const relay = bed.relays[0]!;
  const evil = await bed.open(url!, { keypair: peer.key });
  const bob = await bed.open(url!);
  const send = (m: { params: Record<string, unknown> }) =>
    codeOf(evil.session.request('wmp.message.deliver', m.params));
  const nothingStored = async () => {
    expect((await relay.stores.queue.totals()).count).toBe(0);
    expect(bob.inbox).toHaveLength(0);
  };
  return { peer, url: url!, relay, evil, bob, send, nothingStored };
}

/** The relay still serves: health is ok and a plain message between its own clients goes through. */
async function stillServing(url: string, bob: Client) {
  expect((await fetch(`${url}/health`)).status).toBe(200);
  const other = await bed.open(url);
  await other.session.send([bob.keypair.did], { fine: true });
  await waitFor(() => bob.inbox.length === 1);
}

describe('hostile peer relay', () => {
  it('claims a sender at home at the receiving relay: -31002 sender_homed_here, nothing stored', async () => {
    const { peer, url, bob, evil, send, nothingStored, relay } = await setup();
    expect(await send(await forwarded(peer.key, peer.origin, bob.keypair.did, evil.keypair.did))).toBe(-31002);
    expect(relay.core.federation!.metrics.refusedInByReason.get('sender_homed_here')).toBe(1);
    await nothingStored();
    await stillServing(url, bob);
  });

  it('claims a sender it may not speak for, unsigned: -31002; the same message signed by the sender is taken', async () => {
    const { peer, bob, send, nothingStored, relay } = await setup();
    const stranger = generateKeypair();
    const unsigned = await forwarded(peer.key, peer.origin, stranger.did, bob.keypair.did);
    expect(await send(unsigned)).toBe(-31002);
    expect(relay.core.federation!.metrics.refusedInByReason.get('peer_may_not_speak_for_sender')).toBe(1);
    await nothingStored();
    // Signed by the stranger itself, the peer may carry it (core §8.7.3).
    const base = {
      jsonrpc: '2.0' as const,
      method: 'wmp.message.deliver',
      params: {
        to: [bob.keypair.did],
        body: { signed: true },
        wmp: { sender: stranger.did, message_id: 'msg-signed' },
      },
    };
    const signed = await signMessage(base, stranger);
    const withChain = await relayChainWith(signed, {
      relay: `${peer.origin}/wmp`,
      relayId: peer.key.did,
      signer: peer.key,
    });
    (signed.params.wmp as Record<string, unknown>).relay_chain = withChain;
    expect(await send(signed)).toBe('ok');
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.wmp.sender).toBe(stranger.did);
  });

  it('forges a chain entry, drops one, or cuts its own: -31010 / -31002, nothing stored', async () => {
    const { peer, url, bob, send, nothingStored } = await setup({});
    const stranger = generateKeypair();
    const trusted = { ...peer };
    // Forged: the content changed after the peer signed.
    const forged = await forwarded(trusted.key, peer.origin, stranger.did, bob.keypair.did);
    (forged.params as Record<string, unknown>).body = { changed: true };
    expect(await send(forged)).toBe(-31010);
    // Dropped: an earlier hop signed, then removed, so the peer's previous_chain no longer matches.
    const upstream = generateKeypair();
    const first = await forwarded(upstream, 'http://127.0.0.1:1', stranger.did, bob.keypair.did);
    const second = await forwarded(
      peer.key,
      peer.origin,
      stranger.did,
      bob.keypair.did,
      first.params.wmp.relay_chain as unknown[],
    );
    second.params.wmp.message_id = first.params.wmp.message_id;
    (second.params.wmp.relay_chain as unknown[]).splice(0, 1);
    expect(await send(second)).toBe(-31010);
    // No entry of the peer's own at the end.
    const cut = await forwarded(upstream, 'http://127.0.0.1:1', stranger.did, bob.keypair.did);
    expect(await send(cut)).toBe(-31002);
    await nothingStored();
    await stillServing(url, bob);
  });

  it('a chain holding the receiving relay (loop) or more than 8 hops: -32600, nothing stored', async () => {
    const { peer, url, bob, send, nothingStored, relay } = await setup();
    const stranger = generateKeypair().did;
    const loop = await forwarded(peer.key, peer.origin, stranger, bob.keypair.did, [
      { relay: `${url}/wmp`, relay_id: relay.id, timestamp: new Date().toISOString(), signature: 'x..y' },
    ]);
    expect(await send(loop)).toBe(-32600);
    const hops = Array.from({ length: 8 }, () => ({
      relay: 'https://r.example/wmp',
      relay_id: generateKeypair().did,
      timestamp: new Date().toISOString(),
      signature: 'x..y',
    }));
    expect(await send(await forwarded(peer.key, peer.origin, stranger, bob.keypair.did, hops))).toBe(-32600);
    const reasons = relay.core.federation!.metrics.refusedInByReason;
    expect([reasons.get('relay_loop'), reasons.get('too_many_hops')]).toEqual([1, 1]);
    await nothingStored();
    await stillServing(url, bob);
  });

  it('stamps its entry outside the message life (issue 23 item 6): -31011 relay_chain_timestamp, nothing stored', async () => {
    const { peer, url, bob, send, nothingStored, relay } = await setup();
    const stranger = generateKeypair();
    const HOUR = 3600_000;
    /** A message signed by the stranger (the peer may carry it), the peer's entry stamped at `at`. */
    const stamped = async (at: number, expiresAt?: number) => {
      const wmp: Record<string, unknown> = { sender: stranger.did, message_id: `msg-${at}-${expiresAt ?? 0}` };
      if (expiresAt !== undefined) wmp.expires_at = new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const signed = await signMessage(
        { jsonrpc: '2.0' as const, method: 'wmp.message.deliver', params: { to: [bob.keypair.did], body: {}, wmp } },
        stranger,
      );
      const timestamp = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
      (signed.params.wmp as Record<string, unknown>).relay_chain = await relayChainWith(signed, {
        relay: `${peer.origin}/wmp`,
        relayId: peer.key.did,
        signer: peer.key,
        timestamp,
      });
      return signed;
    };
    const now = Date.now();
    // A day old and more, with no expiry of its own: older than the lifetime it gets here.
    expect(await send(await stamped(now - 25 * HOUR))).toBe(-31011);
    // Older than any message lives here, whatever its expiry says.
    expect(await send(await stamped(now - 31 * 24 * HOUR, now + HOUR))).toBe(-31011);
    // From the future, past the skew.
    expect(await send(await stamped(now + 120_000))).toBe(-31011);
    expect(relay.core.federation!.metrics.refusedInByReason.get('relay_chain_timestamp')).toBe(3);
    await nothingStored();
    // Two hours in the peer's outbox (its peer was down), still within its life: taken.
    expect(await send(await stamped(now - 2 * HOUR, now + HOUR))).toBe('ok');
    await waitFor(() => bob.inbox.length === 1);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it('floods: past its request budget every forward is -31007, nothing more stored, the relay serving', async () => {
    const { peer, url, bob, send, relay } = await setup({ peerRequestsPerSecond: 1, peerRequestBurst: 5 });
    const stranger = generateKeypair().did;
    const codes: unknown[] = [];
    for (let i = 0; i < 20; i++)
      codes.push(await send(await forwarded(peer.key, peer.origin, stranger, bob.keypair.did)));
    expect(codes.filter((c) => c === -31007).length).toBeGreaterThanOrEqual(14);
    expect(codes.every((c) => c === -31007 || c === -31002)).toBe(true);
    expect((await relay.stores.queue.totals()).count).toBe(0);
    await stillServing(url, bob);
  });
});
