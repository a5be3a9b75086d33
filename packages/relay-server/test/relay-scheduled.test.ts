// Scheduled delivery (`wmp.deliver_after`, core §3.2) and recipient metadata (core §7.5.1.2) at
// the recipient's relay (issue 26): a scheduled message waits in the store, not in the
// recipient's queue, and is handed over when due (as its consignment asks); turned off, a
// message asking for it is -31005; what the published recipient metadata does not take is
// refused before anything is stored. Real WebSocket ports.
import { generateKeypair } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import { refusal } from '../../../test-support/code-of.js';
import type { Relay, RelayConfig } from '../src/node.js';
import { type Client, openClient, startRelay, waitFor } from './fixtures/relay-clients.js';

const relays: Relay[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.peer.close().catch(() => undefined);
  for (const r of relays.splice(0)) await r.close();
});

async function relayWith(config: RelayConfig = {}) {
  const started = await startRelay(config);
  relays.push(started.relay);
  return started;
}

async function client(url: string): Promise<Client> {
  const c = await openClient(url);
  clients.push(c);
  return c;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('scheduled delivery', () => {
  it('holds the message until deliver_after, then hands it over (the scheduler on its interval)', async () => {
    const { url, relay } = await relayWith({ timings: { scheduleIntervalMs: 50 } });
    const [alice, bob] = [await client(url), await client(url)];
    const due = Date.now() + 1000;
    const sent = (await alice.session.request('wmp.message.deliver', {
      wmp: { deliver_after: iso(due) },
      to: [bob.keypair.did],
      body: { later: true },
    })) as { message_id: string; status: string };
    expect(sent.status).toBe('queued');
    // Held apart from Bob's queue: nothing of it reaches his connection before its time.
    expect((await relay.stores.queue.stats(bob.keypair.did)).count).toBe(0);
    expect((await relay.stores.queue.stats(`sched:${bob.keypair.did}`)).count).toBe(1);
    await waitFor(() => bob.inbox.length === 1, 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(due);
    expect(bob.inbox[0]).toMatchObject({ body: { later: true }, wmp: { message_id: sent.message_id } });
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered' && s.message_id === sent.message_id));
    expect((await relay.stores.queue.stats(`sched:${bob.keypair.did}`)).count).toBe(0);
  });

  it('a scheduled consented message sends its notice when due; its lifetime counts from then', async () => {
    let now = Date.now();
    const { url, relay } = await relayWith({ now: () => now });
    const [alice, bob] = [await client(url), await client(url)];
    const notices: Record<string, any>[] = [];
    bob.session.on('notification', ({ method, params }) => method === 'wmp.message.notice' && notices.push(params));
    const due = now + 30 * 60_000;
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      wmp: { deliver_after: iso(due) },
      to: [bob.keypair.did],
      body: { in: 'half an hour' },
      consignment_mode: 'consented',
    })) as { message_id: string };
    // The default lifetime (a day) starts when it falls due, not when it was sent.
    const held = await relay.stores.queue.get(`sched:${bob.keypair.did}`, message_id);
    expect(held?.expiresAt).toBe(due + 24 * 3600_000);
    await relay.core.scheduler.run();
    expect(notices).toEqual([]);
    now = due;
    await relay.core.scheduler.run();
    await waitFor(() => notices.length === 1);
    expect(notices[0]).toMatchObject({ message_id, consignment_mode: 'consented' });
    expect(bob.inbox).toEqual([]);
    await bob.session.request('wmp.message.accept', { message_id });
    await waitFor(() => bob.inbox.length === 1);
    expect(bob.inbox[0]!.body).toEqual({ in: 'half an hour' });
  });

  it('refuses what it cannot schedule: too far ahead, expiring before it is due (-32602)', async () => {
    const { url, relay } = await relayWith();
    const [alice, bob] = [await client(url), await client(url)];
    const send = (wmp: Record<string, unknown>) =>
      refusal(alice.session.request('wmp.message.deliver', { wmp, to: [bob.keypair.did], body: {} }));
    expect(await send({ deliver_after: iso(Date.now() + 31 * 24 * 3600_000) })).toEqual({
      code: -32602,
      data: { reason: 'deliver_after too far ahead' },
    });
    expect(await send({ deliver_after: iso(Date.now() + 3600_000), expires_at: iso(Date.now() + 1800_000) })).toEqual({
      code: -32602,
      data: { reason: 'expires_at before deliver_after' },
    });
    expect((await relay.stores.queue.totals()).count).toBe(0);
  });

  it('turned off: advertised scheduled_delivery false, and a message asking for it is -31005', async () => {
    const { url, relay } = await relayWith({ registered: { scheduledDelivery: false } });
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.erds).toMatchObject({ scheduled_delivery: false, delegation: true });
    const [alice, bob] = [await client(url), await client(url)];
    expect(
      await refusal(
        alice.session.request('wmp.message.deliver', {
          wmp: { deliver_after: iso(Date.now() + 60_000) },
          to: [bob.keypair.did],
          body: {},
        }),
      ),
    ).toEqual({ code: -31005, data: { capability: 'erds', unsupported: ['scheduled_delivery'] } });
    expect((await relay.stores.queue.totals()).count).toBe(0);
  });
});

describe('recipient metadata', () => {
  it('is published in the well-known document and enforced for recipients here', async () => {
    const { url, relay } = await relayWith({
      registered: {
        recipientMetadata: {
          acceptedContentTypes: ['application/json'],
          maxMessageSize: 4096,
          consignmentPreference: 'consented',
          encryptionRequired: false,
        },
      },
    });
    const doc = await (await fetch(`${url}/.well-known/wmp-configuration`)).json();
    expect(doc.recipient_metadata).toEqual({
      accepted_content_types: ['application/json'],
      max_message_size: 4096,
      consignment_preferences: 'consented',
      encryption_required: false,
    });
    expect(doc.erds).toMatchObject({
      consignment_modes: ['basic', 'consented', 'consented_signed'],
      delegation: true,
      scheduled_delivery: true,
    });
    const [alice, bob] = [await client(url), await client(url)];
    const to = [bob.keypair.did];
    const deliver = (params: Record<string, unknown>) =>
      refusal(alice.session.request('wmp.message.deliver', { to, ...params }));
    expect(await deliver({ content_type: 'application/pdf', body: 'x' })).toEqual({
      code: -31005,
      data: { capability: 'recipient_metadata', unsupported: ['content_type'] },
    });
    expect(await deliver({ content_type: 'application/json', body: 'x'.repeat(5000) })).toEqual({
      code: -32600,
      data: { reason: 'message too large', max_size: 4096 },
    });
    expect((await relay.stores.queue.totals()).count).toBe(0);
    // No mode named: the recipient's preference (consented) applies, a notice goes out, not the content.
    const notices: Record<string, any>[] = [];
    bob.session.on('notification', ({ method, params }) => method === 'wmp.message.notice' && notices.push(params));
    await alice.session.request('wmp.message.deliver', { to, content_type: 'application/json', body: { ok: 1 } });
    await waitFor(() => notices.length === 1);
    expect(notices[0]).toMatchObject({ consignment_mode: 'consented' });
    expect(bob.inbox).toEqual([]);
  });

  it('encryption required: clear content for a recipient here is -31003', async () => {
    const { url } = await relayWith({ registered: { recipientMetadata: { encryptionRequired: true } } });
    const alice = await client(url);
    expect(
      await refusal(alice.session.request('wmp.message.deliver', { to: [generateKeypair().did], body: 'clear' })),
    ).toEqual({ code: -31003, data: { capability: 'messaging', reason: 'encryption_required' } });
  });
});
