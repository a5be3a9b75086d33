// Two wmp-relay processes, each on its own SQLite directory, peers of each other: Alice's card is
// at relay 1, Bob's at relay 2, so each relay resolves the other's user through its peer's
// directory (docs/federation-profile.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair, type Keypair, verifyRelayChain } from '@wmp/jcs-signing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { publishCard } from './fixtures/cards.js';
import { type Client, openClient, type RelayProcess, startRelayProcess, waitFor } from './fixtures/relay-process.js';

const dirs: string[] = [];
const running: RelayProcess[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.child.kill('SIGKILL');
    await r.exited;
  }
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Pair {
  readonly urls: [string, string];
  start(i: 0 | 1): Promise<RelayProcess>;
}

/** Two relays on fixed ports and their own data directories; `start(i)` (re)starts relay i. */
async function relayPair(): Promise<Pair> {
  const ports = [await freePort(), await freePort()];
  const urls = ports.map((p) => `http://127.0.0.1:${p}`) as [string, string];
  const data = [0, 1].map(() => {
    const d = mkdtempSync(join(tmpdir(), 'wmp-federation-'));
    dirs.push(d);
    return d;
  });
  return {
    urls,
    async start(i) {
      const r = await startRelayProcess(
        [
          ...['--port', String(ports[i]), '--data-dir', data[i]!, '--log-level', 'warn'],
          ...['--peer', urls[1 - i]!, '--card-stamp-bits', '0', '--rate', '100000', '--rate-burst', '100000'],
        ],
        { timeoutMs: 60_000 },
      );
      running.push(r);
      return r;
    },
  };
}

async function outboxDepth(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^wmp_relay_peer_outbox_messages\{[^}]*\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

async function setup() {
  const pair = await relayPair();
  const relays = [await pair.start(0), await pair.start(1)];
  const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
  await publishCard(pair.urls[0], aliceKey);
  await publishCard(pair.urls[1], bobKey);
  return { pair, relays, aliceKey, bobKey };
}

async function connect(url: string, keypair: Keypair): Promise<Client> {
  return openClient(url, 'ws', keypair);
}

describe('wmp-relay federation: two processes, two SQLite files', () => {
  it('live: Alice at relay 1 reaches Bob at relay 2 with a two-entry chain, then hears delivered', async () => {
    const { pair, aliceKey, bobKey } = await setup();
    const alice = await connect(pair.urls[0], aliceKey);
    const bob = await connect(pair.urls[1], bobKey);
    const sent = (await alice.session.send([bobKey.did], { hello: 'bob' })) as { message_id: string };
    await waitFor(() => bob.inbox.length === 1, 30_000);
    const got = bob.inbox[0]!;
    expect(got.wmp.sender).toBe(aliceKey.did);
    expect(got.wmp.message_id).toBe(sent.message_id);
    expect(got.wmp.relay_chain).toHaveLength(2);
    // Relay 1 signed its entry for relay 2; relay 2 hands it to Bob and leaves its own unsigned.
    expect(got.wmp.relay_chain.map((e: { signature?: string }) => e.signature !== undefined)).toEqual([true, false]);
    const message = { jsonrpc: '2.0' as const, method: 'wmp.message.deliver', params: got };
    expect(await verifyRelayChain(message, { allowUnsigned: true })).toBe(2);
    await waitFor(() => alice.statuses.some((s) => s.status === 'delivered'), 30_000);
    expect(alice.statuses.filter((s) => s.status === 'delivered')).toHaveLength(1);
    await alice.peer.close();
    await bob.peer.close();
  }, 180_000);

  it('Bob offline: queued at relay 2 and `queued` reaches Alice; `delivered` once Bob is back', async () => {
    const { pair, aliceKey, bobKey } = await setup();
    const alice = await connect(pair.urls[0], aliceKey);
    const sent = (await alice.session.send([bobKey.did], { n: 1 })) as { message_id: string };
    await waitFor(() => alice.statuses.some((s) => s.status === 'queued'), 30_000);
    expect(alice.statuses[0]).toMatchObject({ message_id: sent.message_id, recipient: bobKey.did });
    const bob = await connect(pair.urls[1], bobKey);
    await waitFor(() => bob.inbox.length === 1 && alice.statuses.some((s) => s.status === 'delivered'), 30_000);
    await alice.peer.close();
    await bob.peer.close();
  }, 180_000);

  it('relay 2 down: the outbox keeps what relay 1 acknowledged, through a SIGKILL of relay 1 too', async () => {
    const { pair, relays, aliceKey, bobKey } = await setup();
    let alice = await connect(pair.urls[0], aliceKey);
    // Resolved while relay 2 is up (Bob's card is in its directory), then relay 2 goes.
    await alice.session.request('ohan.relay.resolve', { identity: bobKey.did });
    relays[1]!.child.kill('SIGKILL');
    await relays[1]!.exited;
    const first = (await alice.session.send([bobKey.did], { n: 'first' })) as { message_id: string };
    expect(await outboxDepth(pair.urls[0])).toBe(1);
    await pair.start(1);
    const bob = await connect(pair.urls[1], bobKey);
    await waitFor(() => bob.inbox.length === 1, 60_000);
    expect(bob.inbox[0]!.wmp.message_id).toBe(first.message_id);

    // Relay 2 down again; Alice's next messages are acknowledged into the outbox, then relay 1 is
    // killed: none of them is lost.
    await bob.peer.close();
    const r2 = running.at(-1)!;
    r2.child.kill('SIGKILL');
    await r2.exited;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(((await alice.session.send([bobKey.did], { i })) as { message_id: string }).message_id);
    expect(await outboxDepth(pair.urls[0])).toBe(20);
    relays[0]!.child.kill('SIGKILL');
    await relays[0]!.exited;
    await alice.peer.close().catch(() => undefined);
    await pair.start(1);
    await pair.start(0);
    const bobAgain = await connect(pair.urls[1], bobKey);
    await waitFor(() => ids.every((id) => bobAgain.inbox.some((m) => m.wmp.message_id === id)), 90_000);
    alice = await connect(pair.urls[0], aliceKey);
    await alice.peer.close();
    await bobAgain.peer.close();
  }, 300_000);
});
