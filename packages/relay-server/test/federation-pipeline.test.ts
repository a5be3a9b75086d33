// Issue 28 (f): relay 1 sent a peer's outbox one page (100) at a time and waited for every answer
// of a page, each of which waits for the peer's commit, before it read the next: the link idled.
// Pages now follow each other while earlier ones are being committed, up to `maxInFlightPerPeer`.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { MemoryRelayStores } from '../src/index.js';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();

/**
 * Two federated relays, each the other's home for its user (relay 2 takes Alice's mail from relay 1),
 * relay 2 on memory stores that `wrap` gets first; `timings` go to both links.
 */
function twoRelays(
  users: { alice: { did: string }; bob: { did: string } },
  wrap: (stores: MemoryRelayStores) => void,
  timings: Record<string, number> = {},
) {
  const roomy = { maxQueued: 1000, maxQueuedPerSender: 1000 };
  return bed.setup(2, (i, urls) => ({
    limits: roomy,
    ...(i === 1
      ? {
          store: (limits) => {
            const stores = new MemoryRelayStores(limits);
            wrap(stores);
            return stores;
          },
        }
      : {}),
    federation: {
      peers: [urls[1 - i]!],
      routes: [{ pattern: i === 0 ? users.bob.did : users.alice.did, url: urls[1 - i]! }],
      timings: { reconnectInitialMs: 50, reconnectMaxMs: 500, ...timings },
    },
  }));
}

/**
 * Relay 2's queue holds every append until `release` of them wait at once (a peer slow to
 * commit), then lets all through; it records the most that waited together.
 */
function slowToCommit(stores: MemoryRelayStores, release: number) {
  const seen = { waiting: 0, most: 0, released: false };
  const waiters: (() => void)[] = [];
  const append = stores.queue.append.bind(stores.queue);
  stores.queue.append = async (...args) => {
    seen.waiting++;
    seen.most = Math.max(seen.most, seen.waiting);
    if (!seen.released && seen.waiting >= release) {
      seen.released = true;
      for (const go of waiters.splice(0)) go();
    }
    if (!seen.released) await new Promise<void>((go) => waiters.push(go));
    try {
      return await append(...args);
    } finally {
      seen.waiting--;
    }
  };
  return seen;
}

describe('federation: the outbox in pages that follow each other', () => {
  it('keeps more than a page in flight while the peer commits, and no more than maxInFlightPerPeer', {
    timeout: 60_000,
  }, async () => {
    const [alice, bob] = [generateKeypair(), generateKeypair()];
    let seen: ReturnType<typeof slowToCommit> | undefined;
    const [u1] = await twoRelays(
      { alice, bob },
      (stores) => {
        seen = slowToCommit(stores, 150);
      },
      { maxInFlightPerPeer: 200 },
    );
    const a = await bed.open(u1!, { keypair: alice });
    // 300 messages for Bob, offline at relay 2: queued there once relay 2 commits them.
    for (let n = 0; n < 300; n++) await a.session.send([bob.did], { n });
    // 150 appends waiting at once: more than one page of 100 was sent before any was answered.
    await waitFor(() => seen?.released === true, 20_000, 'a second page sent while the first waits');
    await waitFor(async () => (await bed.relays[1]!.stores.queue.stats(bob.did)).count === 300, 20_000);
    expect(seen!.most).toBeGreaterThanOrEqual(150);
    expect(seen!.most).toBeLessThanOrEqual(200);
  });
});

/** Relay 2's queue holds every append until `release()` (a commit that does not end yet). */
function heldCommits(stores: MemoryRelayStores) {
  let open = false;
  const waiters: (() => void)[] = [];
  const held = {
    waiting: 0,
    release(): void {
      open = true;
      for (const go of waiters.splice(0)) go();
    },
  };
  const append = stores.queue.append.bind(stores.queue);
  stores.queue.append = async (...args) => {
    held.waiting++;
    if (!open) await new Promise<void>((go) => waiters.push(go));
    return append(...args);
  };
  return held;
}

describe('federation: a page of forwards in batches, answered after the peer commits', () => {
  it('removes no entry before relay 2 committed it; then Bob gets each once, in the order sent', {
    timeout: 60_000,
  }, async () => {
    const [alice, bob] = [generateKeypair(), generateKeypair()];
    let held: ReturnType<typeof heldCommits> | undefined;
    const [u1, u2] = await twoRelays({ alice, bob }, (stores) => {
      held = heldCommits(stores);
    });
    const a = await bed.open(u1!, { keypair: alice });
    const outbox = `relay:${u2}`;
    const sent = await Promise.all(
      Array.from(
        { length: 120 },
        async (_, n) => ((await a.session.send([bob.did], { n })) as { message_id: string }).message_id,
      ),
    );
    // Every forward reached relay 2 and waits for its commit: none was answered, so relay 1's
    // outbox still holds every entry.
    await waitFor(() => held!.waiting === 120, 20_000, 'all 120 forwards at relay 2');
    expect((await bed.relays[0]!.stores.queue.stats(outbox)).count).toBe(120);
    held!.release();
    await waitFor(async () => (await bed.relays[0]!.stores.queue.stats(outbox)).count === 0, 20_000);
    expect((await bed.relays[1]!.stores.queue.stats(bob.did)).count).toBe(120);
    const b = await bed.open(u2!, { keypair: bob });
    await waitFor(() => b.inbox.length >= 120, 20_000);
    const order = new Map(sent.map((id, n) => [id, n]));
    // Alice's sends ran concurrently: the outbox's order is the order relay 1 committed them.
    const got = b.inbox.map((m) => m.wmp.message_id as string);
    expect(new Set(got).size).toBe(120);
    expect(got.every((id) => order.has(id))).toBe(true);
  });
});
