import { WmpSession } from '@wmp/session';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_CAPABILITIES,
  type Client,
  codeOf,
  connectPeer,
  relayTestbed,
  waitFor,
} from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open, disconnect } = testbed;

/** Opens a group session of `creator` with `others` (tls: the relay has no MLS group to check against). */
async function groupOf(creator: Client, others: readonly Client[]): Promise<WmpSession> {
  return WmpSession.open(creator.peer, {
    signer: creator.keypair,
    participants: others.map((o) => o.keypair.did),
    capabilities: CLIENT_CAPABILITIES,
  });
}

/**
 * Joins a group session; what arrives on it is collected raw. The handler replaces the session's
 * own (`client.inbox` no longer grows): deliveries on other sessions go to `others`.
 */
async function join(
  client: Client,
  groupId: string,
  others: Record<string, any>[] = [],
): Promise<Record<string, any>[]> {
  const got: Record<string, any>[] = [];
  client.peer.setNotificationHandler('wmp.message.deliver', (p) => {
    const params = p as Record<string, any>;
    (params.wmp.session_id === groupId ? got : others).push(params);
  });
  await client.peer.request('wmp.session.join', {
    wmp: { version: '0.1', sender: client.keypair.did },
    session_id: groupId,
  });
  return got;
}

describe('wmp.message.fetch (the MLS relay queue)', () => {
  it('filters by since_epoch and sessions, pages with after/limit, removes nothing', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url, { register: false });
    const g1 = await groupOf(alice, [bob]);
    const g2 = await groupOf(alice, [bob]);
    const send = (g: WmpSession, epoch: number, n: number) =>
      g.request('wmp.message.deliver', { wmp: { encrypted: true, epoch }, ciphertext: `AAE${n}` });
    for (const epoch of [1, 2, 3, 4, 5]) await send(g1, epoch, epoch);
    await send(g2, 9, 6);
    await alice.session.send([bob.keypair.did], 'plain, no epoch');
    const fetch = (params: Record<string, unknown>) => bob.session.request('wmp.message.fetch', params) as Promise<any>;

    const all = await fetch({});
    expect(all.messages).toHaveLength(7);
    expect(all.has_more).toBe(false);
    const recent = await fetch({ since_epoch: 3 });
    expect(recent.messages.map((m: any) => m.wmp.epoch)).toEqual([3, 4, 5, 9]);
    expect(recent.messages[0]).toMatchObject({ ciphertext: 'AAE3', wmp: { encrypted: true, session_id: g1.id } });
    const second = await fetch({ sessions: [g2.id] });
    expect(second.messages.map((m: any) => m.ciphertext)).toEqual(['AAE6']);
    expect((await fetch({ since_epoch: 2, sessions: [g1.id] })).messages).toHaveLength(4);

    // Paging: `limit`, then `after` the answer's `next`.
    const p1 = await fetch({ since_epoch: 1, limit: 2 });
    expect([p1.messages.map((m: any) => m.wmp.epoch), p1.has_more]).toEqual([[1, 2], true]);
    const p2 = await fetch({ since_epoch: 1, limit: 2, after: p1.next });
    expect([p2.messages.map((m: any) => m.wmp.epoch), p2.has_more]).toEqual([[3, 4], true]);
    const p3 = await fetch({ since_epoch: 1, limit: 2, after: p2.next });
    expect([p3.messages.map((m: any) => m.wmp.epoch), p3.has_more]).toEqual([[5, 9], true]);
    const p4 = await fetch({ since_epoch: 1, limit: 2, after: p3.next });
    expect([p4.messages, p4.has_more]).toEqual([[], false]);
    // Nothing was removed; bad paging is -32602.
    expect((await fetch({})).messages).toHaveLength(7);
    expect(await codeOf(fetch({ limit: 0 }))).toBe(-32602);
    expect(await codeOf(fetch({ after: 7 }))).toBe(-32602);
    expect(await codeOf(fetch({ since_epoch: -1 }))).toBe(-32602);
  });

  it('reads at most 500 queue entries per call and says there is more', async () => {
    const url = await setup({ limits: { maxQueuedPerSender: 1000 } });
    const bob = await open(url, { register: false });
    const queue = testbed.relay!.stores.queue;
    const expiresAt = Date.now() + 60_000;
    const entry = (i: number, epoch?: number) => ({
      id: `msg-${i}`,
      sender: 'did:key:z6MkAlice',
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'wmp.message.deliver',
        params: {
          wmp: { version: '0.1', ...(epoch === undefined ? {} : { epoch, encrypted: true }) },
          ciphertext: 'AAAA',
        },
      }),
    });
    for (let i = 0; i < 520; i++) await queue.append(bob.keypair.did, entry(i), { expiresAt });
    await queue.append(bob.keypair.did, entry(520, 4), { expiresAt });
    const first = (await bob.session.request('wmp.message.fetch', { since_epoch: 1 })) as any;
    expect(first).toMatchObject({ messages: [], has_more: true });
    // The cursor is a queue position: acknowledging the message it stopped at does not send the
    // next page back to the start.
    await queue.ack(bob.keypair.did, ['msg-499', 'msg-498']);
    const second = (await bob.session.request('wmp.message.fetch', { since_epoch: 1, after: first.next })) as any;
    expect(second.messages.map((m: any) => m.wmp.epoch)).toEqual([4]);
    expect(second.has_more).toBe(false);
    // A message id still works as `after`.
    const byId = (await bob.session.request('wmp.message.fetch', { since_epoch: 1, after: 'msg-510' })) as any;
    expect(byId.messages.map((m: any) => m.wmp.epoch)).toEqual([4]);
  });
});

describe('joining a group session (the session engine join hook)', () => {
  it('hands the group backlog to the joining connection at once, without a register', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url, { register: false });
    const carol = await open(url); // registered for hop messages before joining
    const group = await groupOf(alice, [bob, carol]);
    await alice.session.send([carol.keypair.did], 'hop before');
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push(((await group.request('wmp.message.deliver', { body: n })) as any).message_id);
    await waitFor(() => carol.inbox.length === 1);

    const bobGot = await join(bob, group.id);
    const carolHop: Record<string, any>[] = []; // carol's hop messages after the join
    const carolGot = await join(carol, group.id, carolHop);
    await waitFor(() => bobGot.length === 3 && carolGot.length === 3);
    for (const got of [bobGot, carolGot]) {
      expect(got.map((m) => m.body)).toEqual([1, 2, 3]);
      expect(got.map((m) => m.wmp.message_id)).toEqual(ids);
    }
    // Live after the join, in order after the backlog; the hop message was not sent twice.
    await group.request('wmp.message.deliver', { body: 4 });
    await waitFor(() => bobGot.length === 4 && carolGot.length === 4);
    // Markers, a hop message and a group message: a second copy of anything came before them.
    await alice.session.send([carol.keypair.did], 'hop after');
    await group.request('wmp.message.deliver', { body: 5 });
    await waitFor(() => carolHop.length > 0 && bobGot.length === 5 && carolGot.length === 5);
    expect(carol.inbox.map((m) => m.body)).toEqual(['hop before']);
    expect(carolHop.map((m) => m.body)).toEqual(['hop after']);
    expect(bobGot.map((m) => m.body)).toEqual([1, 2, 3, 4, 5]);
    expect(carolGot.map((m) => m.body)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('statuses for a sender who is offline when they arise', () => {
  it('are kept in its queue and arrive when it comes back', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);
    const { message_id } = (await alice.session.send([bob.keypair.did], 'while you were out')) as any;
    await waitFor(() => alice.statuses.length === 1);
    expect(alice.statuses[0]).toMatchObject({ message_id, status: 'queued' });

    // Alice goes away; Bob comes back and acknowledges: `delivered` waits for Alice.
    await disconnect(alice);
    expect(await bob.session.resume(await connectPeer(url))).toBe(1);
    await waitFor(() => bob.inbox.length === 1);
    await bob.session.notify('wmp.message.ack', { message_ids: [message_id], status: 'received' });
    const queue = testbed.relay!.stores.queue;
    await waitFor(async () => (await queue.stats(alice.keypair.did)).count === 1);

    // Alice resumes: the status arrives, once (a kept status is no missed message); her
    // acknowledgement removes it, with no status about it.
    expect(await alice.session.resume(await connectPeer(url))).toBe(0);
    await waitFor(() => alice.statuses.length === 2);
    const delivered = alice.statuses[1]!;
    expect(delivered).toMatchObject({ message_id, status: 'delivered', recipient: bob.keypair.did });
    await alice.session.notify('wmp.message.ack', { message_ids: [delivered.wmp.message_id], status: 'received' });
    await waitFor(async () => (await queue.stats(alice.keypair.did)).count === 0);
    // A marker from Alice to Bob, acknowledged: a status to Bob, or a second one to Alice, caused
    // by her acknowledgement would have come before the marker and its `delivered`.
    const marker = ((await alice.session.send([bob.keypair.did], 'marker')) as any).message_id;
    await waitFor(() => bob.inbox.length === 2);
    await bob.session.notify('wmp.message.ack', { message_ids: [marker], status: 'received' });
    await waitFor(() => alice.statuses.some((s) => s.message_id === marker && s.status === 'delivered'));
    expect(bob.statuses).toEqual([]);
    expect(alice.statuses.filter((s) => s.message_id !== marker)).toHaveLength(2);
  });

  it('are not kept for a sender that never asked for statuses', async () => {
    const url = await setup();
    // Her session negotiated no `offline` (no statuses), so none is kept for her.
    const alice = await open(url, { capabilities: { messaging: {}, relay: {} } });
    const bob = await open(url);
    await alice.session.send([bob.keypair.did], 'hi');
    await waitFor(() => bob.inbox.length === 1);
    await bob.session.notify('wmp.message.ack', { message_ids: [bob.inbox[0]!.wmp.message_id], status: 'received' });
    // The relay has sent its `delivered` (its counter says so) and decided then whether to keep it;
    // a kept one is appended to Alice's queue in microtasks that a timer tick of waitFor outlasts.
    const metrics = testbed.relay!.core.metrics;
    await waitFor(() => (metrics.statuses.get('delivered') ?? 0) === 1);
    expect(await testbed.relay!.stores.queue.stats(alice.keypair.did)).toEqual({ count: 0, bytes: 0 });
  });
});
