// Consignment and assurance at the recipient's relay (core §3.5, §3.5.1, issue 26): `basic` is
// handed over on delivery; `consented` gives the recipient a notice (no content) and the content
// only once it accepts; `consented_signed` only with the acceptance signed; a recipient below the
// message's `recipient_assurance_level` never gets the content (the sender hears `dropped`,
// `insufficient_assurance`). Real WebSocket ports, the relay's real authenticators.
import { generateKeypair, type Keypair, signMessage } from '@wmp/jcs-signing';
import { WmpSession as Session, type WmpSession } from '@wmp/session';
import { x509Identity } from '@wmp/session/x509';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../../../test-support/code-of.js';
import { makePki, type TestPki } from '../../session/test/pki.js';
import { type Relay, type RelayConfig, relayAuthenticators, type WitnessedEvent } from '../src/node.js';
import { type Client, collect, connectPeer, openClient, startRelay, waitFor } from './fixtures/relay-clients.js';

const relays: Relay[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.peer.close().catch(() => undefined);
  for (const r of relays.splice(0)) await r.close();
});

let pki: TestPki;
beforeAll(async () => {
  pki = await makePki();
});

/** A relay whose witnessed events are kept in `events`. */
async function relayWith(config: RelayConfig = {}) {
  const events: WitnessedEvent[] = [];
  const started = await startRelay({
    ...config,
    registered: { ...config.registered, evidence: { witness: (e) => events.push(e) } },
  });
  relays.push(started.relay);
  return { ...started, events };
}

async function client(url: string, keypair?: Keypair): Promise<Client> {
  const c = await openClient(url, keypair ? { keypair } : {});
  clients.push(c);
  return c;
}

/** Notices a session received. */
function notices(session: WmpSession): Record<string, any>[] {
  const got: Record<string, any>[] = [];
  session.on('notification', ({ method, params }) => {
    if (method === 'wmp.message.notice') got.push(params);
  });
  return got;
}

/** A signed `wmp.message.accept` (consented_signed): the receipt is the accept's signature. */
async function signedAccept(session: WmpSession, signer: Keypair, params: Record<string, unknown>) {
  const signed = await signMessage(
    { jsonrpc: '2.0', method: 'wmp.message.accept', params: { wmp: session.metadata(), ...params } },
    signer,
  );
  return session.request('wmp.message.accept', signed.params as Record<string, unknown>);
}

describe('consignment at the recipient relay', () => {
  it('consented: a notice without the content, then the content once the recipient accepts', async () => {
    const { url, relay, events } = await relayWith();
    const [alice, bobKey] = [await client(url), generateKeypair()];
    const bob = await client(url, bobKey);
    const seen = notices(bob.session);
    const sent = (await alice.session.request('wmp.message.deliver', {
      to: [bobKey.did],
      content_type: 'text/plain',
      subject: 'contract',
      body: 'the secret terms',
      consignment_mode: 'consented',
    })) as { message_id: string; status: string };
    expect(sent.status).toBe('queued');
    await waitFor(() => seen.length === 1);
    const notice = seen[0]!;
    expect(notice).toMatchObject({
      message_id: sent.message_id,
      sender: alice.keypair.did,
      consignment_mode: 'consented',
      content_type: 'text/plain',
      subject: 'contract',
      recipient: bobKey.did,
      content_hash: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      wmp: { sender: relay.id },
    });
    expect(JSON.stringify(notice)).not.toContain('secret');
    expect(bob.inbox).toEqual([]);
    expect(events.map((e) => e.eventType)).toEqual(['notification_sent']);

    const accepted = await bob.session.request('wmp.message.accept', { message_id: sent.message_id });
    expect(accepted).toMatchObject({ message_id: sent.message_id, status: 'accepted' });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]).toMatchObject({ body: 'the secret terms', wmp: { message_id: sent.message_id } });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered' && s.message_id === sent.message_id));
    expect(events.at(-1)).toMatchObject({
      eventType: 'acceptance_confirmed',
      messageId: sent.message_id,
      sender: alice.keypair.did,
      recipient: bobKey.did,
    });
    // Accepted once: a second accept finds nothing waiting.
    expect(await refusal(bob.session.request('wmp.message.accept', { message_id: sent.message_id }))).toEqual({
      code: -32602,
      data: { reason: 'no message awaiting consent' },
    });
  });

  it('consented: a rejection drops the content; the sender hears dropped / recipient_rejected', async () => {
    const { url, relay, events } = await relayWith();
    const [alice, bobKey] = [await client(url), generateKeypair()];
    const bob = await client(url, bobKey);
    const seen = notices(bob.session);
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bobKey.did],
      body: { no: 'thanks' },
      consignment_mode: 'consented',
    })) as { message_id: string };
    await waitFor(() => seen.length === 1);
    // Nobody else answers for Bob: another identity finds nothing of his.
    const eve = await client(url);
    expect(await refusal(eve.session.request('wmp.message.accept', { message_id }))).toMatchObject({ code: -32602 });
    expect(await bob.session.request('wmp.message.reject', { message_id })).toMatchObject({ status: 'rejected' });
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped'));
    expect(alice.statuses.find((s) => s.status === 'dropped')).toMatchObject({
      message_id,
      recipient: bobKey.did,
      reason: 'recipient_rejected',
    });
    expect(events.at(-1)).toMatchObject({ eventType: 'acceptance_rejected', reason: 'recipient_rejected' });
    expect(bob.inbox).toEqual([]);
    expect((await relay.stores.queue.totals()).count).toBe(1); // the notice, until Bob acknowledges it
  });

  it('consented_signed: the acceptance must cover the content hash and be signed by the recipient', async () => {
    const { url, events } = await relayWith();
    const [alice, bobKey] = [await client(url), generateKeypair()];
    const bob = await client(url, bobKey);
    const seen = notices(bob.session);
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bobKey.did],
      body: { sign: 'here' },
      consignment_mode: 'consented_signed',
    })) as { message_id: string };
    await waitFor(() => seen.length === 1);
    const hash = seen[0]!.content_hash as string;
    expect(await refusal(bob.session.request('wmp.message.accept', { message_id, content_hash: hash }))).toMatchObject({
      code: -31010,
      data: { reason: 'missing' },
    });
    expect(await refusal(signedAccept(bob.session, bobKey, { message_id }))).toEqual({
      code: -32602,
      data: { reason: 'content_hash required' },
    });
    expect(await refusal(signedAccept(bob.session, bobKey, { message_id, content_hash: 'x'.repeat(43) }))).toEqual({
      code: -32602,
      data: { reason: 'content_hash does not match the message' },
    });
    // Signed by someone else than the one who accepts.
    expect(
      await refusal(signedAccept(bob.session, generateKeypair(), { message_id, content_hash: hash })),
    ).toMatchObject({
      code: -31010,
    });
    expect(bob.inbox).toEqual([]);
    await signedAccept(bob.session, bobKey, { message_id, content_hash: hash });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.body).toEqual({ sign: 'here' });
    const confirmed = events.find((e) => e.eventType === 'acceptance_confirmed')!;
    expect(confirmed.receipt).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
  });

  it('a mode or level the relay does not serve is -31005 naming it, before anything is stored', async () => {
    const { url, relay } = await relayWith({ registered: { consignmentModes: ['basic'] } });
    const [alice, bob] = [await client(url), await client(url)];
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds).toMatchObject({ consignment_modes: ['basic'], assurance_levels: ['low', 'substantial'] });
    expect(
      await refusal(
        alice.session.request('wmp.message.deliver', {
          to: [bob.keypair.did],
          body: {},
          consignment_mode: 'consented',
          recipient_assurance_level: 'high',
          applicable_policies: ['urn:example:policy'],
        }),
      ),
    ).toEqual({
      code: -31005,
      data: {
        capability: 'erds',
        unsupported: ['consignment_mode', 'recipient_assurance_level', 'applicable_policies'],
      },
    });
    expect((await relay.stores.queue.totals()).count).toBe(0);
  });

  it('a consented message nobody answers expires: the sender hears expired, the evidence acceptance_expired', async () => {
    let now = Date.now();
    const { url, relay, events } = await relayWith({ now: () => now });
    const [alice, bob] = [await client(url), await client(url)];
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bob.keypair.did],
      body: {},
      consignment_mode: 'consented',
      wmp: { expires_at: new Date(now + 60_000).toISOString() },
    })) as { message_id: string };
    now += 61_000;
    await relay.core.sweeper.run();
    await waitFor(() => alice.statuses.some((s) => s.status === 'expired' && s.message_id === message_id));
    expect(alice.statuses.find((s) => s.status === 'expired')).toMatchObject({ recipient: bob.keypair.did });
    expect(events.some((e) => e.eventType === 'acceptance_expired' && e.messageId === message_id)).toBe(true);
  });
});

describe('recipient assurance at the recipient relay', () => {
  /** An x5c-authenticated, registered client of the test PKI's wallet.example.com. */
  async function x509Client(url: string): Promise<{ session: WmpSession } & ReturnType<typeof collect>> {
    const peer = await connectPeer(url);
    const x509 = await x509Identity({
      certificatesPem: pki.dnsLeaf.pem + pki.intermediate.pem,
      privateKeyPem: pki.dnsLeaf.key.pkcs8Pem,
    });
    const session = await Session.open(peer, { x509, capabilities: { messaging: {}, relay: {}, offline: {} } });
    const got = collect(session);
    await session.request('wmp.relay.register', {});
    clients.push({ keypair: generateKeypair(), peer, session, ...got, register: async () => undefined });
    return { session, ...got };
  }

  it('a did:key recipient (low) never gets content asking for substantial: dropped / insufficient_assurance', async () => {
    const { url, relay, events } = await relayWith();
    const [alice, bob] = [await client(url), await client(url)];
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bob.keypair.did],
      body: { for: 'substantial only' },
      recipient_assurance_level: 'substantial',
    })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped'));
    expect(alice.statuses.find((s) => s.status === 'dropped')).toMatchObject({
      message_id,
      recipient: bob.keypair.did,
      reason: 'insufficient_assurance',
    });
    expect(bob.inbox).toEqual([]);
    expect((await relay.stores.queue.stats(bob.keypair.did)).count).toBe(0);
    expect(events).toMatchObject([
      { eventType: 'delivery_failed', reason: 'insufficient_assurance', messageId: message_id },
    ]);
  });

  it('an x5c recipient (substantial by the table, high by an operator-rated anchor) gets what its level allows', async () => {
    const authenticators = await relayAuthenticators({
      trustAnchors: pki.root.pem,
      assuranceAnchors: [{ level: 'high', anchors: pki.intermediate.pem }],
    });
    const { url } = await relayWith({ authenticators, registered: { anchorLevels: ['high'] } });
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds.assurance_levels).toEqual(['low', 'substantial', 'high']);
    const alice = await client(url);
    const wallet = await x509Client(url);
    await alice.session.request('wmp.message.deliver', {
      to: ['x509:san:dns:wallet.example.com'],
      body: { level: 'high' },
      recipient_assurance_level: 'high',
    });
    await waitFor(() => wallet.inbox.length === 1);
    expect(wallet.inbox[0]!.body).toEqual({ level: 'high' });

    // Without the rated anchor the same chain is only substantial: content asking for high never reaches it.
    const plain = await relayWith({ authenticators: await relayAuthenticators({ trustAnchors: pki.root.pem }) });
    const alice2 = await client(plain.url);
    const wallet2 = await x509Client(plain.url);
    await alice2.session.request('wmp.message.deliver', {
      to: ['x509:san:dns:wallet.example.com'],
      body: { level: 'substantial' },
      recipient_assurance_level: 'substantial',
    });
    await waitFor(() => wallet2.inbox.length === 1);
    const refused = (await refusal(
      alice2.session.request('wmp.message.deliver', {
        to: ['x509:san:dns:wallet.example.com'],
        body: { level: 'high' },
        recipient_assurance_level: 'high',
      }),
    )) as { code: number };
    // `high` is not a level this relay reaches: refused before anything is stored.
    expect(refused.code).toBe(-31005);
  });

  it('consented and below the level: the acceptance fails the delivery (-31002 insufficient_assurance)', async () => {
    const { url } = await relayWith();
    const [alice, bobKey] = [await client(url), generateKeypair()];
    const bob = await client(url, bobKey);
    const seen = notices(bob.session);
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      to: [bobKey.did],
      body: {},
      consignment_mode: 'consented',
      recipient_assurance_level: 'substantial',
    })) as { message_id: string };
    // The notice carries no content: it reaches a low connection, and says the level asked.
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ recipient_assurance_level: 'substantial' });
    expect(await refusal(bob.session.request('wmp.message.accept', { message_id }))).toEqual({
      code: -31002,
      data: { reason: 'insufficient_assurance' },
    });
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped' && s.reason === 'insufficient_assurance'));
    expect(bob.inbox).toEqual([]);
  });
});
