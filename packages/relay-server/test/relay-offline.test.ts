import { describe, expect, it } from 'vitest';
import { gate } from '../../../test-support/gate.js';
import { codeOf, connectPeer, relayTestbed, waitFor } from './fixtures/relay-clients.js';

const testbed = relayTestbed();
const { setup, open, disconnect } = testbed;

describe('offline recipients (at least once, docs/wmp-profile.md)', () => {
  it('queues for an offline recipient, replays in order on resume: queued, then exactly one delivered', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);

    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push(((await alice.session.send([bob.keypair.did], { n })) as any).message_id);
    await waitFor(() => alice.statuses.length === 3);
    expect(alice.statuses.map((s) => [s.message_id, s.status])).toEqual(ids.map((id) => [id, 'queued']));
    expect(alice.statuses[0]!.queued_until).toMatch(/Z$/);

    const missed = await bob.session.resume(await connectPeer(url));
    expect(missed).toBe(3);
    // The registration came back with the resume: no new wmp.relay.register.
    await waitFor(() => bob.inbox.length === 3);
    expect(bob.inbox.map((m) => m.body.n)).toEqual([1, 2, 3]);
    expect(bob.inbox.map((m) => m.wmp.message_id)).toEqual(ids);
    // Written to his connection: `delivered` for each, without waiting for an ack
    // (docs/architecture.md, "Message statuses").
    const delivered = () => alice.statuses.filter((s) => s.status === 'delivered').map((s) => s.message_id);
    await waitFor(() => delivered().length === 3);
    expect(delivered()).toEqual(ids);

    // Live again: a new message arrives at once, without `queued`, and is `delivered`.
    const fourth = ((await alice.session.send([bob.keypair.did], { n: 4 })) as any).message_id as string;
    await waitFor(() => bob.inbox.length === 4 && delivered().length === 4);
    expect(delivered()[3]).toBe(fourth);

    // Acknowledge the first two by ack, the rest by a resume whose last_received_id covers them:
    // no status is sent twice, and nothing covered is replayed.
    await bob.session.notify('wmp.message.ack', { message_ids: ids.slice(0, 2), status: 'received' });
    await waitFor(async () => (await testbed.relay!.stores.queue.stats(bob.keypair.did)).count === 2);
    await disconnect(bob);
    expect(await bob.session.resume(await connectPeer(url))).toBe(0);
    await waitFor(async () => (await testbed.relay!.stores.queue.stats(bob.keypair.did)).count === 0);
    // A marker after everything: a fifth message, delivered; by then no earlier status came twice.
    const fifth = ((await alice.session.send([bob.keypair.did], { n: 5 })) as any).message_id as string;
    await waitFor(() => delivered().includes(fifth));
    expect(delivered()).toEqual([...ids, fourth, fifth]);
    expect(bob.inbox.map((m) => m.body.n)).toEqual([1, 2, 3, 4, 5]);
  });

  it('sends nothing on a resumed connection before the resume is answered, not even a message routed meanwhile', async () => {
    // Before its answer the client still sends on the connection it left: an acknowledgement of
    // a message that came first would be lost, and the relay would not send it again (decision 0734).
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);
    await alice.session.send([bob.keypair.did], { n: 1 });
    // The resume is held inside its hook (counting what bob missed) while alice sends him another.
    const queue = testbed.relay!.stores.queue;
    const counting = queue.undelivered.bind(queue);
    const { opened: inHook, open: entered } = gate();
    const { opened: proceeding, open: proceed } = gate();
    queue.undelivered = async (...args) => {
      entered();
      await proceeding;
      return counting(...args);
    };
    // What reaches bob's new connection, in wire order: the resume's answer must come first.
    // (Read off the frames, not off when `resume()` settles: one TCP read may carry the answer
    // and the messages after it, and ws hands them over in one turn, before any continuation.)
    const next = await connectPeer(url);
    const wire: string[] = [];
    const receive = next.transport.onmessage!;
    next.transport.onmessage = (frame, extra) => {
      const message = JSON.parse(String(frame));
      wire.push(message.method ?? (message.result?.resumption_token ? 'resume answer' : 'answer'));
      receive(frame, extra);
    };
    const resumed = bob.session.resume(next);
    await inHook;
    await alice.session.send([bob.keypair.did], { n: 2 });
    await waitFor(async () => (await counting(bob.keypair.did, Date.now(), undefined)) === 2);
    proceed();
    expect(await resumed).toBe(2);
    await waitFor(() => bob.inbox.length === 2);
    expect(bob.inbox.map((m) => m.body.n)).toEqual([1, 2]);
    expect(wire.filter((kind) => kind !== 'wmp.message.status')).toEqual([
      'resume answer',
      'wmp.message.deliver',
      'wmp.message.deliver',
    ]);
  });

  it('counts a queued message at the UTF-8 bytes of the text it stores, multi-byte content too', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);
    await alice.session.send([bob.keypair.did], { text: 'é✓😀'.repeat(40) });
    await waitFor(() => alice.statuses.length === 1);
    const queue = testbed.relay!.stores.queue;
    const [stored] = (await queue.after(bob.keypair.did, 0, 10)).messages;
    const bytes = Buffer.byteLength(stored!.body);
    expect(bytes).toBeGreaterThan(stored!.body.length);
    expect(stored!.bytes).toBe(bytes);
    expect(await queue.stats(bob.keypair.did)).toEqual({ count: 1, bytes });
  });

  it('replays what was not acknowledged again after a reconnect (at-least-once, ids to dedupe)', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url);
    const { message_id } = (await alice.session.send([bob.keypair.did], 'again')) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1);
    bob.session.lastReceivedId = undefined; // as if it crashed before recording it
    await disconnect(bob);
    await bob.session.resume(await connectPeer(url));
    await waitFor(() => bob.inbox.length === 2);
    expect(bob.inbox[1]!.wmp.message_id).toBe(message_id);
  });

  it('expires what is not delivered in time: expired, once, and nothing replayed', async () => {
    const url = await setup({ timings: { sweepIntervalMs: 50 } });
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);
    const expiresAt = new Date(Date.now() + 300).toISOString();
    const { message_id } = (await alice.session.request('wmp.message.deliver', {
      wmp: { expires_at: expiresAt },
      to: [bob.keypair.did],
      body: 'short-lived',
    })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'expired'));
    // A second short-lived message is the marker: by its `expired` the sweeper has run again, and
    // a second status about the first would have come before it.
    const second = (await alice.session.request('wmp.message.deliver', {
      wmp: { expires_at: new Date(Date.now() + 100).toISOString() },
      to: [bob.keypair.did],
      body: 'marker',
    })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.message_id === second.message_id && s.status === 'expired'));
    expect(alice.statuses.filter((s) => s.message_id === message_id).map((s) => s.status)).toEqual([
      'queued',
      'expired',
    ]);
    expect(await bob.session.resume(await connectPeer(url))).toBe(0);
    // Live again: a message sent now arrives, and nothing expired came before it.
    await alice.session.send([bob.keypair.did], 'live');
    await waitFor(() => bob.inbox.length > 0);
    expect(bob.inbox.map((m) => m.body)).toEqual(['live']);
    // An expiry already past is refused.
    const past = alice.session.request('wmp.message.deliver', {
      wmp: { expires_at: new Date(Date.now() - 1000).toISOString() },
      to: [bob.keypair.did],
    });
    expect(await codeOf(past)).toBe(-32602);
  });

  it('answers -31014 when the recipient queue is full, and dropped for a notification', async () => {
    const url = await setup({ limits: { maxQueued: 2, maxQueuedPerSender: 2 } });
    const alice = await open(url);
    const bob = await open(url);
    await disconnect(bob);
    await alice.session.send([bob.keypair.did], 1);
    await alice.session.send([bob.keypair.did], 2);
    expect(await codeOf(alice.session.send([bob.keypair.did], 3))).toBe(-31014);
    await alice.session.notify('wmp.message.deliver', { to: [bob.keypair.did], body: 4 });
    await waitFor(() => alice.statuses.some((s) => s.status === 'dropped'));
    expect(alice.statuses.map((s) => s.status)).toEqual(['queued', 'queued', 'dropped']);
    expect(alice.statuses[2]).toMatchObject({ recipient: bob.keypair.did, reason: 'max_queued' });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/wmp_relay_errors_total\{code="-31014"\} 1/);
    expect(metrics).toMatch(/wmp_relay_queued_messages 2/);
  });

  it('serves wmp.message.poll from the queue without removing anything', async () => {
    const url = await setup();
    const alice = await open(url);
    const bob = await open(url, { register: false });
    await alice.session.send([bob.keypair.did], 'polled');
    const first = (await bob.session.request('wmp.message.poll', { limit: 10 })) as any;
    expect(first.messages).toHaveLength(1);
    expect(first.messages[0].params.body).toBe('polled');
    const again = (await bob.session.request('wmp.message.poll', {})) as any;
    expect(again.messages).toHaveLength(1);
  });
});
