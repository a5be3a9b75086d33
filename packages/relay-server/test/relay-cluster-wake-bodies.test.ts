// Wake-ups that carry the stored message across the nodes of one relay (docs/decisions/0661): a
// receiver caught up on another node gets it without a read of its queue; a wake-up that was lost,
// or one whose message is over the bound (a hint then), still loses nothing and keeps seq order,
// through a read. The safety poll is out of the way: only the wake-ups explain what arrives.
import { describe, expect, it } from 'vitest';
import type { Coordination } from '../src/coordination/contracts/coordination.js';
import { MAX_WAKE_BODY_CHARS, type WakeUps } from '../src/coordination/contracts/wake-ups.js';
import type { QueueStore, RelayStores } from '../src/node.js';
import { cluster } from './fixtures/cluster-nodes.js';
import { openClient } from './fixtures/relay-clients.js';

/** Node 0's wake-ups, of which the test drops the next `drop` it publishes (a network losing them). */
function lossy(coordination: Coordination) {
  const control = { drop: 0 };
  const wakeUps: WakeUps = Object.assign(Object.create(coordination.wakeUps) as WakeUps, {
    publish: (recipient: string, seq?: number, body?: string) => {
      if (control.drop > 0) {
        control.drop--;
        return Promise.resolve(0);
      }
      return coordination.wakeUps.publish(recipient, seq, body);
    },
  });
  return { control, coordination: { ...coordination, wakeUps } };
}

/** Node 1's stores, counting the queue pages it has read (once each read is answered). */
function counting(stores: RelayStores) {
  const reads = { pages: 0 };
  const queue = new Proxy(stores.queue, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'after')
        return async (...args: Parameters<QueueStore['after']>) => {
          const page = await target.after(...args);
          reads.pages++;
          return page;
        };
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { reads, stores: { ...stores, queue } };
}

async function twoNodes() {
  let publisher: ReturnType<typeof lossy> | undefined;
  let receiver: ReturnType<typeof counting> | undefined;
  const { cluster: c, clients } = await cluster(
    2,
    { timings: { safetyPollMs: 600_000 } },
    {
      coordination: (i, coordination) => {
        if (i !== 0) return coordination;
        publisher = lossy(coordination);
        return publisher.coordination;
      },
      stores: (i, stores) => {
        if (i !== 1) return stores;
        receiver = counting(stores);
        return receiver.stores;
      },
    },
  );
  const alice = await openClient(c.urls[0]!);
  const bob = await openClient(c.urls[1]!);
  clients.push(alice, bob);
  // Bob's first pump has read his (empty) queue: he is caught up. (A wake-up that came while that
  // read was out would have asked for a second read, after the count below was taken.)
  await expect.poll(() => receiver!.reads.pages).toBeGreaterThan(0);
  await alice.session.send([bob.keypair.did], 'first');
  await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual(['first']);
  return { alice, bob, control: publisher!.control, reads: receiver!.reads };
}

describe('wake-ups that carry the stored message', () => {
  it('hand a receiver caught up on another node each message without a read of its queue', async () => {
    const { alice, bob, reads } = await twoNodes();
    const before = reads.pages;
    for (const body of ['two', 'three', 'four']) {
      await alice.session.send([bob.keypair.did], body);
      await expect.poll(() => bob.inbox.at(-1)?.body).toBe(body);
    }
    expect(bob.inbox.map((m) => m.body)).toEqual(['first', 'two', 'three', 'four']);
    expect(reads.pages).toBe(before);
  });

  it('lose nothing when one is lost: the next one finds a gap and the queue is read, in seq order', async () => {
    const { alice, bob, control, reads } = await twoNodes();
    const before = reads.pages;
    control.drop = 1;
    await alice.session.send([bob.keypair.did], 'its wake-up is lost');
    await alice.session.send([bob.keypair.did], 'this one wakes');
    await expect.poll(() => bob.inbox.map((m) => m.body)).toEqual(['first', 'its wake-up is lost', 'this one wakes']);
    expect(reads.pages).toBeGreaterThan(before);
  });

  it('go as a hint for a message over the bound: the receiver reads it from its queue', async () => {
    const { alice, bob, reads } = await twoNodes();
    const before = reads.pages;
    const big = 'x'.repeat(MAX_WAKE_BODY_CHARS);
    await alice.session.send([bob.keypair.did], big);
    await expect.poll(() => bob.inbox.length).toBe(2);
    expect(bob.inbox[1]!.body).toBe(big);
    expect(reads.pages).toBeGreaterThan(before);
    // And the next small one comes with its wake-up again.
    const after = reads.pages;
    await alice.session.send([bob.keypair.did], 'small');
    await expect.poll(() => bob.inbox.at(-1)?.body).toBe('small');
    expect(reads.pages).toBe(after);
  });
});
