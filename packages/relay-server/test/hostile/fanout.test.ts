// Issue 12, item 1: fan-out amplification. One deliver to many made-up recipients, one sender's
// routed bytes over time, the bytes queued in the whole relay, and one sender's share of someone
// else's queue: each bounded, and the relay keeps serving.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { hostileTestbed, type Login, metric, must, RawSocket } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

const madeUp = (n: number) => Array.from({ length: n }, () => generateKeypair().did);

/** Delivers `body` from `login` to `to` until the relay refuses (at most `max` times); the accepted count and the refusal. */
async function deliverUntilRefused(socket: RawSocket, login: Login, to: () => string[], body: unknown, max: number) {
  for (let accepted = 0; accepted < max; accepted++) {
    const answer = await socket.deliver(login, to(), body);
    if (answer.error) return { accepted, error: answer.error };
  }
  return { accepted: max, error: undefined };
}

describe('fan-out (issue 12 item 1)', { timeout: 60_000 }, () => {
  it('refuses a ~1 MiB deliver to 256 made-up recipients (-31007 fan-out) and stores nothing', async () => {
    const bed = await testbed.setup();
    const socket = await RawSocket.open(bed.url);
    const login = await socket.login();
    const before = await metric(bed.url, 'wmp_relay_queued_bytes');
    const to = madeUp(256);
    // Just under the 1 MiB message cap with the 256 recipients in it.
    const answer = await socket.deliver(login, to, 'x'.repeat(1024 * 1024 - 40 * 1024));
    expect(answer.error).toMatchObject({ code: -31007, data: { reason: 'fan-out' } });
    expect(await metric(bed.url, 'wmp_relay_queued_messages')).toBe(1); // the canary only
    expect(await metric(bed.url, 'wmp_relay_queued_bytes')).toBe(before);
    expect(await bed.relay.stores.queue.stats(to[0]!)).toMatchObject({ count: 0 });
    expect(await metric(bed.url, 'wmp_relay_refusals_total{cause="fanout"}')).toBe(1);
    // The same sender still routes a normal message.
    must(await socket.deliver(login, [to[0]!], 'small'));
    await bed.checkHealthy();
  });

  it("budgets a sender's routed bytes over a window, per identity and per source address", async () => {
    const burst = 64 * 1024;
    const bed = await testbed.setup(
      { limits: { routedBytesPerSecond: 8192, routedBytesBurst: burst, maxFanoutBytes: 1024 * 1024 } },
      { frozenClock: true },
    );
    const body = 'y'.repeat(8000);
    const recipient = madeUp(1);
    const counts: number[] = [];
    // Five identities, each on its own connection, from the one loopback source (4x one budget).
    for (let i = 0; i < 5; i++) {
      const socket = await RawSocket.open(bed.url);
      const login = await socket.login();
      const { accepted, error } = await deliverUntilRefused(socket, login, () => recipient, body, 40);
      expect(error).toMatchObject({ code: -31007, data: { reason: 'routed bytes' } });
      counts.push(accepted);
      await socket.close();
    }
    // Each identity got at most its own burst of 8 KB messages; together at most the source's.
    const perIdentity = counts[0]!;
    expect(perIdentity).toBeGreaterThan(0);
    expect(perIdentity * 8000).toBeLessThanOrEqual(burst);
    for (const n of counts) expect(n).toBeLessThanOrEqual(perIdentity);
    expect(counts.reduce((a, b) => a + b, 0) * 8000).toBeLessThanOrEqual(4 * burst);
    // The last fresh identity was cut off by the source's budget before its own ran out.
    expect(counts[4]!).toBeLessThan(perIdentity);
    // A window later the budget is back.
    bed.clock.advance(10_000);
    const again = await RawSocket.open(bed.url);
    must(await again.deliver(await again.login(), recipient, body));
    await bed.checkHealthy();
  });

  it('caps the bytes queued in the whole relay (-31014 total_bytes) across many recipients', async () => {
    const bed = await testbed.setup({
      limits: { maxTotalQueueBytes: 64 * 1024, routedBytesBurst: 16 * 1024 * 1024 },
    });
    const socket = await RawSocket.open(bed.url);
    const login = await socket.login();
    // Every message to another made-up recipient: no recipient's own cap is near.
    const { accepted, error } = await deliverUntilRefused(socket, login, () => madeUp(1), 'z'.repeat(8000), 40);
    // (The wire error carries no reason: which cap refused is the relay's business.)
    expect(error).toMatchObject({ code: -31014 });
    expect(accepted).toBeGreaterThan(0);
    expect(await metric(bed.url, 'wmp_relay_queued_bytes')).toBeLessThanOrEqual(64 * 1024);
    await bed.checkHealthy();
  });

  it("gives one sender only a share of another's queue: a stranger's group cannot fill V's inbox", async () => {
    // Per recipient 8 messages; a sender's share is a quarter: 2.
    const bed = await testbed.setup({ limits: { maxQueued: 8 } });
    const victim = generateKeypair();
    const stranger = await RawSocket.open(bed.url);
    const s = await stranger.login();
    // The stranger lists V as a participant of a group session and talks on it.
    const onGroup = await stranger.login(s.keypair, { participants: [victim.did] });
    const flooded = await deliverUntilRefused(stranger, onGroup, () => [victim.did], 'spam', 20);
    // Its share (2 of V's 8), not V's queue, ran out.
    expect(flooded.accepted).toBe(2);
    expect(flooded.error).toMatchObject({ code: -31014 });
    expect(await bed.relay.stores.queue.stats(victim.did)).toMatchObject({ count: 2 });

    // V's friends still get through.
    const friends: string[] = [];
    for (let i = 0; i < 3; i++) {
      const friend = await RawSocket.open(bed.url);
      const f = await friend.login();
      friends.push(must(await friend.deliver(f, [victim.did], { from: 'friend', i })).message_id);
      await friend.close();
    }
    const v = await RawSocket.open(bed.url);
    const vl = await v.login(victim);
    await v.register(vl);
    await waitFor(
      () => friends.every((id) => v.received.some((m) => m.params?.wmp?.message_id === id)),
      15_000,
      "the friends' messages",
    );
    await bed.checkHealthy();
  });
});
