// Statuses to a peer relay (docs/federation-profile.md, "Statuses"): they wait in the peer's queue
// until its link acknowledges them; past that queue's caps (a peer that acknowledges slowly) they
// go live instead of being dropped.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();

describe('federation: statuses to a peer that acknowledges slowly', () => {
  it("past the peer's queue caps a status goes live instead: Alice hears `delivered` for each of three", async () => {
    const alice = generateKeypair();
    const recipients = [generateKeypair(), generateKeypair(), generateKeypair()];
    // Relay 2 holds at most one status relay 1 has not acknowledged yet (its one sender: itself).
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      identity: { seed: new Uint8Array(32).fill(i + 5) },
      ...(i === 1 ? { limits: { maxQueuedPerSender: 1 } } : {}),
      federation: {
        peers: [urls[1 - i]!],
        routes:
          i === 0
            ? recipients.map((r) => ({ pattern: r.did, url: urls[1]! }))
            : [{ pattern: alice.did, url: urls[0]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    }));
    const a = await bed.open(u1!, { keypair: alice });
    for (const r of recipients) await bed.open(u2!, { keypair: r });
    // One message to three recipients: their three `delivered` arise at relay 2 at once.
    const { message_id } = (await a.session.send(
      recipients.map((r) => r.did),
      { n: 3 },
    )) as { message_id: string };
    await waitFor(() => a.statuses.filter((s) => s.status === 'delivered').length >= 3, 20_000);
    const delivered = a.statuses.filter((s) => s.status === 'delivered');
    expect(delivered.map((s) => s.recipient).sort()).toEqual(recipients.map((r) => r.did).sort());
    expect(delivered.every((s) => s.message_id === message_id)).toBe(true);
  });
});

describe('federation: a burst of statuses back to the peer', () => {
  it('each status reaches Alice once, and relay 2 keeps none once relay 1 acknowledged them together', async () => {
    const alice = generateKeypair();
    const bob = generateKeypair();
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      identity: { seed: new Uint8Array(32).fill(i + 9) },
      federation: {
        peers: [urls[1 - i]!],
        routes: i === 0 ? [{ pattern: bob.did, url: urls[1]! }] : [{ pattern: alice.did, url: urls[0]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    }));
    const a = await bed.open(u1!, { keypair: alice });
    await bed.open(u2!, { keypair: bob });
    // Every kept status relay 2 acknowledged: counted by ids, whatever frames they came in.
    const relay1 = bed.relays[0]!.id;
    const queue = bed.relays[1]!.stores.queue;
    const ack = queue.ack.bind(queue);
    const acked: string[] = [];
    queue.ack = async (recipient, ids) => {
      if (recipient === relay1) acked.push(...ids);
      return ack(recipient, ids);
    };
    const sent = await Promise.all(
      Array.from({ length: 40 }, (_, n) => a.session.send([bob.did], { n }) as Promise<{ message_id: string }>),
    );
    await waitFor(() => a.statuses.filter((s) => s.status === 'delivered').length >= 40, 20_000);
    await waitFor(async () => (await queue.stats(relay1)).count === 0, 20_000);
    const delivered = a.statuses.filter((s) => s.status === 'delivered').map((s) => s.message_id);
    expect(delivered.sort()).toEqual(sent.map((s) => s.message_id).sort());
    expect(new Set(acked).size).toBe(40);
  });
});
