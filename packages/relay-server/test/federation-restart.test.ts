// Federation across restarts (docs/federation-profile.md, "Statuses"): the return route a relay
// learnt from a forward is in memory, so after a restart of the home relay a status for that sender
// goes to the peer that is its resolved home; and the outbox of a peer nobody configured (a
// resolved home) is found in the store at start and sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/sqlite.js';
import { federationTestbed } from './fixtures/federation.js';
import { waitFor } from './fixtures/relay-clients.js';

const bed = federationTestbed();
const dir = mkdtempSync(join(tmpdir(), 'wmp-federation-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('federation: the home relay restarts', () => {
  it('Bob comes back after relay 2 restarted: his message is there, and `delivered` reaches Alice once', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const path = join(dir, 'relay-2.db');
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      identity: { seed: new Uint8Array(32).fill(i + 1) },
      ...(i === 1 ? { store: (limits) => SqliteStore.open({ path, ...limits }) } : {}),
      federation: {
        peers: [urls[1 - i]!],
        routes: [{ pattern: i === 0 ? bob.did : aliceKey.did, url: urls[1 - i]! }],
        timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    }));
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const { message_id } = (await alice.session.send([bob.did], { n: 1 })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'queued'), 10_000, 'queued at relay 2');
    expect((await bed.relays[1]!.stores.queue.stats(bob.did)).count).toBe(1);

    // Relay 2 restarts on its file: what it learnt in memory (Alice came through relay 1) is gone.
    await bed.stop(1);
    await bed.start(1);
    const b = await bed.open(u2!, { keypair: bob });
    await waitFor(() => b.inbox.length === 1, 20_000, 'the message at Bob');
    expect(b.inbox[0]!.wmp.message_id).toBe(message_id);
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'), 20_000, 'delivered at Alice');
    // Relay 2 holds nothing but Bob's message: no status for Alice kept there, none still to come.
    await waitFor(async () => (await bed.relays[1]!.stores.queue.totals()).count === 1, 20_000, 'relay 2 holding one');
    expect(alice.statuses.filter((s) => s.status === 'delivered')).toEqual([
      expect.objectContaining({ message_id, recipient: bob.did }),
    ]);
  }, 60_000);

  it('the first relay restarts with a full outbox for a peer it was never configured with: sent once it is back', async () => {
    const [aliceKey, bob] = [generateKeypair(), generateKeypair()];
    const path = join(dir, 'relay-1.db');
    const [u1, u2] = await bed.setup(2, (i, urls) => ({
      identity: { seed: new Uint8Array(32).fill(i + 3) },
      ...(i === 0 ? { store: (limits) => SqliteStore.open({ path, ...limits }) } : {}),
      federation:
        i === 0
          ? // Relay 2 is only Bob's resolved home here (a route), not a configured peer.
            { routes: [{ pattern: bob.did, url: urls[1]! }], timings: { reconnectInitialMs: 50, reconnectMaxMs: 500 } }
          : { peers: [urls[0]!], routes: [{ pattern: aliceKey.did, url: urls[0]! }] },
    }));
    await bed.stop(1);
    const alice = await bed.open(u1!, { keypair: aliceKey });
    const sent = (await alice.session.send([bob.did], { n: 2 })) as { message_id: string; status: string };
    expect(sent.status).toBe('queued');
    expect((await bed.relays[0]!.stores.queue.stats(`relay:${u2}`)).count).toBe(1);
    await alice.peer.close();

    await bed.stop(0);
    await bed.start(1);
    await bed.start(0);
    const b = await bed.open(u2!, { keypair: bob });
    await waitFor(() => b.inbox.length === 1, 20_000);
    expect(b.inbox[0]!.wmp.message_id).toBe(sent.message_id);
    await waitFor(async () => (await bed.relays[0]!.stores.queue.stats(`relay:${u2}`)).count === 0, 20_000);
  });
});
