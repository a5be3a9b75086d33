// Issue 23 item 1: a peer's outbox was one queue for everyone. While the peer relay was down, four
// throwaway identities filled it (their sender shares of one queue), and then every user got
// -31014 for every recipient at that peer. The outbox is partitioned now: each remote recipient
// within its own limits (as if queued here), the outbox within caps of its own, each sender's
// totals across it bounded; refusals are counted per peer.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { federationTestbed } from '../fixtures/federation.js';
import { type Client, codeOf } from '../fixtures/relay-clients.js';

const bed = federationTestbed();
const [bob, carol, dave] = [generateKeypair().did, generateKeypair().did, generateKeypair().did];

/** Relay 1 routes Bob, Carol and Dave to relay 2, which is down. */
async function peerDown(limits: Record<string, number>) {
  const [u1, u2] = await bed.setup(2, (i, urls) => ({
    limits,
    federation: {
      peers: [urls[1 - i]!],
      routes: i === 0 ? [bob, carol, dave].map((pattern) => ({ pattern, url: urls[1]! })) : [],
      timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
    },
  }));
  await bed.stop(1);
  return { url: u1!, outbox: `relay:${u2}`, relay: bed.relays[0]! };
}

const send = (client: Client, to: string) =>
  codeOf(client.session.request('wmp.message.deliver', { to: [to], body: { n: Math.random() } }));

describe('hostile clients: flooding the outbox of a peer that is down (issue 23 item 1)', () => {
  it("four throwaways fill Bob's part: Bob is full, as he would be here; everyone else's traffic to the peer goes on", async () => {
    // Bob's limits as if queued here: 8 messages, 2 per sender.
    const { url, outbox, relay } = await peerDown({ maxQueued: 8, maxQueuedPerSender: 2 });
    const throwaways = await Promise.all(Array.from({ length: 4 }, () => bed.open(url)));
    for (const t of throwaways) {
      expect([await send(t, bob), await send(t, bob)]).toEqual(['ok', 'ok']);
      expect(await send(t, bob)).toBe(-31014); // its share of Bob's part (the last one: Bob's part is full)
    }
    const alice = await bed.open(url);
    expect(await send(alice, bob)).toBe(-31014); // Bob's part is full, as his queue here would be
    expect(await send(alice, carol)).toBe('ok');
    expect(await send(alice, dave)).toBe('ok');
    expect(await relay.stores.queue.partStats(outbox, bob)).toMatchObject({ count: 8 });
    expect(await relay.stores.queue.stats(outbox)).toMatchObject({ count: 10 });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain(
      `wmp_relay_peer_outbox_full_total{peer="${outbox.slice('relay:'.length)}",reason="sender_share"} 3`,
    );
    expect(metrics).toContain(
      `wmp_relay_peer_outbox_full_total{peer="${outbox.slice('relay:'.length)}",reason="max_queued"} 2`,
    );
  });

  it("the outbox's own caps hold, and one sender's totals across it", async () => {
    const { url, outbox, relay } = await peerDown({
      maxQueued: 100,
      maxQueuedPerSender: 100,
      maxOutboxMessages: 6,
      maxOutboxMessagesPerSender: 3,
    });
    const [mallory, alice, trent] = await Promise.all([bed.open(url), bed.open(url), bed.open(url)]);
    expect([await send(mallory, bob), await send(mallory, carol), await send(mallory, dave)]).toEqual([
      'ok',
      'ok',
      'ok',
    ]);
    expect(await send(mallory, bob)).toBe(-31014); // its totals across the outbox
    expect([await send(alice, bob), await send(alice, carol), await send(alice, dave)]).toEqual(['ok', 'ok', 'ok']);
    expect(await send(trent, carol)).toBe(-31014); // the outbox is at its own cap
    expect(await relay.stores.queue.stats(outbox)).toMatchObject({ count: 6 });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/wmp_relay_peer_outbox_full_total\{peer="[^"]+",reason="queue_sender_share"\} 1/);
    expect(metrics).toMatch(/wmp_relay_peer_outbox_full_total\{peer="[^"]+",reason="queue_count"\} 1/);
  });
});
