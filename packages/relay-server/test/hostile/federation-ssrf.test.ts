// Issue 23 item 2: any logged-in throwaway did:key made the relay fetch loopback and private
// addresses on its behalf (`ohan.relay.resolve` on did:web:127.0.0.1%3A<port>, a card naming
// http://127.0.0.1:<port>, a peer's document naming a loopback endpoint) and echoed part of the
// answer. Every such fetch now goes through the guarded fetcher: https only, no private, loopback,
// link-local or unique-local address (after DNS), unless the operator allows private peers; a
// resolution is budgeted per identity; the answer says the home's origin and the rule, no more.
import { createServer, type Server } from 'node:http';
import { generateKeypair } from '@wmp/jcs-signing';
import { createCard, generateEncKeypair } from '@wmp/ohan-seal';
import { afterEach, describe, expect, it } from 'vitest';
import { federationTestbed } from '../fixtures/federation.js';
import { type Client, waitFor } from '../fixtures/relay-clients.js';

const bed = federationTestbed();
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A server inside the network: counts every request and WebSocket upgrade; answers `document`. */
async function insider(document: (origin: string) => Record<string, unknown>) {
  const seen = { requests: 0, upgrades: 0 };
  const server = createServer((_req, res) => {
    seen.requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(document(origin)));
  });
  server.on('upgrade', (_req, socket) => {
    seen.upgrades++;
    socket.destroy();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const origin = `http://127.0.0.1:${port}`;
  return { seen, port, origin };
}

const secretDocument = (origin: string) => ({
  relay: `${origin}/internal/path?token=s3cret`,
  relay_id: generateKeypair().did,
  endpoints: { websocket: `${origin.replace('http', 'ws')}/wmp` },
  secret: 'do-not-echo',
});

async function resolve(client: Client, identity: string): Promise<Record<string, unknown>> {
  return client.session.request('ohan.relay.resolve', { identity }).then(
    (r) => r as Record<string, unknown>,
    (e: { code: number; data?: { reason?: string } }) => ({ code: e.code, reason: e.data?.reason }),
  );
}

describe('hostile client: federation resolution as a way into the network (issue 23 item 2)', () => {
  it('resolving loopback, private and metadata names fetches nothing and keeps the recipient here', async () => {
    const target = await insider(secretDocument);
    const [url] = await bed.setup(1, () => ({ federation: {} }));
    const mallory = await bed.open(url!);
    for (const identity of [
      `did:web:127.0.0.1%3A${target.port}`,
      `did:web:127.0.0.1%3A${target.port}:user`,
      `x509:san:dns:localhost:${target.port}`,
      `x509:san:dns:127.0.0.1:${target.port}`,
      `https://127.0.0.1:${target.port}/`,
      `https://[::1]:${target.port}/`,
      'did:web:169.254.169.254',
      'x509:san:dns:10.0.0.1',
      'x509:san:dns:[fd00::1]',
    ]) {
      const answer = await resolve(mallory, identity);
      expect(answer, identity).toMatchObject({ identity, home: 'here', source: 'default' });
      // The answer is the home and the rule: no failure detail, nothing of any document.
      expect(Object.keys(answer).sort(), identity).toEqual(['home', 'identity', 'source', 'wmp']);
    }
    // Messages to them stay here too, and still nothing was fetched or opened.
    await mallory.session.send([`did:web:127.0.0.1%3A${target.port}:bob`], { knock: true });
    await waitFor(
      async () => (await bed.relays[0]!.stores.queue.stats(`did:web:127.0.0.1%3A${target.port}:bob`)).count === 1,
    );
    expect(target.seen).toEqual({ requests: 0, upgrades: 0 });
  });

  it('a card naming a loopback relay is not followed: no well-known fetched, no WebSocket opened', async () => {
    const target = await insider(secretDocument);
    const [url] = await bed.setup(1, () => ({ federation: {} }));
    const bobKey = generateKeypair();
    const card = await createCard({ signer: bobKey, enc: generateEncKeypair().multikey, relays: [target.origin] });
    expect(await bed.relays[0]!.stores.box.putCard(card, Date.now())).toBe('stored');
    const mallory = await bed.open(url!);
    expect(await resolve(mallory, bobKey.did)).toMatchObject({ home: 'here', source: 'default' });
    await mallory.session.send([bobKey.did], { knock: true });
    await waitFor(async () => (await bed.relays[0]!.stores.queue.stats(bobKey.did)).count === 1);
    expect((await bed.relays[0]!.stores.queue.recipientsWithPrefix('relay:', 10)).length).toBe(0);
    expect(target.seen).toEqual({ requests: 0, upgrades: 0 });
  });

  it("a configured peer's document naming a loopback endpoint elsewhere: the link never opens it", async () => {
    const target = await insider(secretDocument);
    const peer = await insider(() => ({
      relay_id: generateKeypair().did,
      endpoints: { websocket: `ws://127.0.0.1:${target.port}/wmp` },
    }));
    await bed.setup(1, () => ({
      federation: { peers: [peer.origin], timings: { reconnectInitialMs: 20, reconnectMaxMs: 50 } },
    }));
    // The link read the peer's document several times (tries and retries): it never dialled the endpoint.
    await waitFor(() => peer.seen.requests >= 3);
    expect(target.seen).toEqual({ requests: 0, upgrades: 0 });
  });

  it('resolution is budgeted per identity: a throwaway spends its own, others keep theirs; a cached answer is free', async () => {
    const [url] = await bed.setup(1, () => ({
      federation: { timings: { resolveBurst: 3, resolvesPerSecond: 0.001 } },
    }));
    const mallory = await bed.open(url!);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await resolve(mallory, `did:web:10.0.0.${i + 1}`));
    expect(answers.slice(0, 3).every((a) => a.home === 'here')).toBe(true);
    expect(answers.slice(3)).toEqual([
      { code: -31007, reason: 'resolution budget' },
      { code: -31007, reason: 'resolution budget' },
    ]);
    // What is cached costs nothing (an unresolvable answer is cached too).
    expect(await resolve(mallory, 'did:web:10.0.0.1')).toMatchObject({ home: 'here' });
    const other = await bed.open(url!);
    expect(await resolve(other, 'did:web:10.0.0.9')).toMatchObject({ home: 'here' });
    expect(bed.relays[0]!.core.federation!.metrics.resolvesRefused).toBe(2);
  });

  it('--allow-private-peers reaches loopback, one fetch per document, and echoes the origin only', async () => {
    const target = await insider(secretDocument);
    const [url] = await bed.setup(1, () => ({ federation: { allowPrivatePeers: true } }));
    const client = await bed.open(url!);
    for (const user of ['a', 'b', 'c']) {
      const answer = await resolve(client, `did:web:127.0.0.1%3A${target.port}:${user}`);
      expect(answer).toMatchObject({ home: target.origin, source: 'well-known' });
      expect(JSON.stringify(answer)).not.toMatch(/s3cret|internal|do-not-echo/);
    }
    expect(target.seen.requests).toBe(1);
  });
});
