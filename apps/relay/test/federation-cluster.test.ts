// A federated relay on the cluster backend (issue 15): relay 1 is two wmp-relay nodes on one
// PostgreSQL and one Redis behind a TCP balancer (its public URL), relay 2 one process on SQLite,
// peers of each other. Both nodes of relay 1 hold a link to relay 2 as the same relay_id, so relay
// 2 sends each status on both: relay 1 passes each on once, and sends its outbox from one node at
// a time, handing it on when that node dies (docs/architecture.md, "Federation", "Cluster").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/services/index.js';
import { publishCard } from './fixtures/cards.js';
import { startCluster, type TestCluster } from './fixtures/cluster.js';
import {
  type Client,
  disconnect,
  metric,
  openClient,
  type RelayProcess,
  startRelayProcess,
  waitFor,
} from './fixtures/relay-process.js';
import { startBalancer, type TcpBalancer } from './fixtures/tcp-balancer.js';

interface Setup {
  readonly cluster: TestCluster;
  readonly balancer: TcpBalancer;
  readonly nodes: [RelayProcess, RelayProcess];
  readonly relay2: RelayProcess;
  readonly relay2Url: string;
  readonly aliceKey: Keypair;
  readonly bobKey: Keypair;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
}, 120_000);

const RATES = ['--rate', '100000', '--rate-burst', '100000'];

/** A sum over the peers of a per-peer federation metric of one relay. */
async function peerMetric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

async function setup(name: string): Promise<Setup> {
  const cluster = await startCluster(name);
  cleanups.push(() => cluster.destroy());
  const relay2Port = await freePort();
  const relay2Url = `http://127.0.0.1:${relay2Port}`;
  const nodeFlags = ['--peer', relay2Url, '--card-stamp-bits', '0'];
  const nodes = [await cluster.start(`${name}-a`, nodeFlags), await cluster.start(`${name}-b`, nodeFlags)] as [
    RelayProcess,
    RelayProcess,
  ];
  // Relay 2 reaches relay 1 through its public URL, which lands on node B.
  const balancer = await startBalancer(Number(new URL(cluster.publicUrl).port), Number(new URL(nodes[1].url).port));
  cleanups.push(() => balancer.close());
  const dir = mkdtempSync(join(tmpdir(), 'wmp-fedcluster-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const startRelay2 = async () => {
    const r = await startRelayProcess(
      [
        ...['--port', String(relay2Port), '--data-dir', dir, '--log-level', 'warn'],
        ...['--peer', cluster.publicUrl, '--card-stamp-bits', '0', ...RATES],
      ],
      { timeoutMs: 60_000 },
    );
    cleanups.push(async () => {
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
      await r.exited;
    });
    return r;
  };
  const relay2 = await startRelay2();
  const [aliceKey, bobKey] = [generateKeypair(), generateKeypair()];
  await publishCard(nodes[0].url, aliceKey, cluster.publicUrl);
  await publishCard(relay2Url, bobKey, relay2Url);
  // Both nodes' links to relay 2 are up and registered: relay 2 sends each status on both.
  for (const node of nodes) {
    await waitFor(async () => (await peerMetric(node.url, 'wmp_relay_peer_connected')) === 1, 60_000, 'link up');
  }
  return { cluster, balancer, nodes, relay2, relay2Url, aliceKey, bobKey };
}

async function client(url: string, keypair: Keypair): Promise<Client> {
  const c = await openClient(url, 'ws', keypair);
  cleanups.push(() => c.peer.close());
  return c;
}

/** How many times each id occurs. */
function counts(ids: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

const messageIds = (c: Client) => c.inbox.map((m) => m.wmp.message_id as string);
const statusIds = (c: Client, status: string) =>
  c.statuses.filter((s) => s.status === status).map((s) => s.message_id as string);

/** Every id exactly once. */
function expectOnce(seen: readonly string[], ids: readonly string[]): void {
  const c = counts(seen);
  expect(ids.map((id) => c.get(id) ?? 0)).toEqual(ids.map(() => 1));
  expect(seen).toHaveLength(ids.length);
}

/** Statuses passed on by relay 1, over both nodes. */
async function passedOn(s: Setup, alive = s.nodes): Promise<number> {
  let sum = 0;
  for (const node of alive) sum += await peerMetric(node.url, 'wmp_relay_peer_statuses_total');
  return sum;
}

/**
 * Relay 2 holds nothing but Bob's messages (`bobHolds`, never acknowledged by the test client):
 * every status it kept for relay 1 was acknowledged by a link, so no copy of one is still to come.
 */
async function relay2Settled(s: Setup, bobHolds: number): Promise<void> {
  await waitFor(
    async () => (await metric(s.relay2Url, 'wmp_relay_queued_messages')) === bobHolds,
    60_000,
    "relay 2's kept statuses to be acknowledged",
  );
}

describe('wmp-relay federation on a cluster: relay 1 on two nodes (PostgreSQL + Redis), relay 2 on SQLite', () => {
  it('live, offline and back, both ways: each message once at Bob, one terminal status each at Alice, also on node B', async () => {
    const s = await setup('fedlive');
    const [nodeA, nodeB] = s.nodes;
    const alice = await client(nodeA.url, s.aliceKey);
    const bob = await client(s.relay2Url, s.bobKey);

    // Live: Bob online at relay 2.
    const live: string[] = [];
    for (let i = 0; i < 5; i++)
      live.push(((await alice.session.send([s.bobKey.did], { i })) as { message_id: string }).message_id);
    await waitFor(() => bob.inbox.length >= 5 && statusIds(alice, 'delivered').length >= 5, 60_000, 'live delivery');
    await relay2Settled(s, 5);
    expect(await passedOn(s)).toBe(5);
    expectOnce(messageIds(bob), live);
    expectOnce(statusIds(alice, 'delivered'), live);

    // Bob offline: `queued` once, then `delivered` once when he is back.
    await disconnect(s.relay2Url, bob.peer);
    const later = ((await alice.session.send([s.bobKey.did], { later: true })) as { message_id: string }).message_id;
    await waitFor(() => statusIds(alice, 'queued').includes(later), 60_000, 'queued');
    const bobAgain = await client(s.relay2Url, s.bobKey);
    await waitFor(() => statusIds(alice, 'delivered').includes(later), 60_000, 'delivered after Bob is back');
    await relay2Settled(s, 6);
    expect(await passedOn(s)).toBe(7);
    expectOnce(statusIds(alice, 'queued'), [later]);
    expectOnce(statusIds(alice, 'delivered'), [...live, later]);
    expect(messageIds(bobAgain)).toContain(later);

    // Alice away: Bob's `delivered` for her messages are kept, and reach her on node B.
    await disconnect(nodeA.url, alice.peer);
    await disconnect(s.relay2Url, bobAgain.peer);
    const away: string[] = [];
    const aliceSender = await client(nodeA.url, s.aliceKey);
    for (let i = 0; i < 3; i++)
      away.push(((await aliceSender.session.send([s.bobKey.did], { away: i })) as { message_id: string }).message_id);
    // (Statuses kept for Alice earlier, by the node that was not hers, come again on this connection.)
    await waitFor(() => away.every((id) => statusIds(aliceSender, 'queued').includes(id)), 60_000, 'queued');
    await disconnect(nodeA.url, aliceSender.peer);
    const bobThird = await client(s.relay2Url, s.bobKey);
    await waitFor(() => away.every((id) => messageIds(bobThird).includes(id)), 60_000, 'Bob gets them');
    await relay2Settled(s, 9);
    await waitFor(async () => (await passedOn(s)) === 13, 60_000, 'the delivered statuses to be passed on');
    const aliceOnB = await client(nodeB.url, s.aliceKey);
    await waitFor(() => away.every((id) => statusIds(aliceOnB, 'delivered').includes(id)), 60_000, 'kept statuses');
    expectOnce(
      statusIds(aliceOnB, 'delivered').filter((id) => away.includes(id)),
      away,
    );

    // The other way: Bob at relay 2 to Alice on node B, while relay 2's link lands on node B too,
    // and to Alice on node A: delivered once to her, and one `delivered` back to Bob.
    const back = ((await bobThird.session.send([s.aliceKey.did], { hi: 'alice' })) as { message_id: string })
      .message_id;
    await waitFor(() => messageIds(aliceOnB).includes(back), 60_000, 'Alice on node B gets it');
    await waitFor(() => statusIds(bobThird, 'delivered').includes(back), 60_000, 'delivered back to Bob');
    await disconnect(nodeB.url, aliceOnB.peer);
    const aliceOnA = await client(nodeA.url, s.aliceKey);
    const toA = ((await bobThird.session.send([s.aliceKey.did], { hi: 'node a' })) as { message_id: string })
      .message_id;
    await waitFor(() => messageIds(aliceOnA).includes(toA), 60_000, 'Alice on node A gets it');
    await waitFor(() => statusIds(bobThird, 'delivered').includes(toA), 60_000, 'delivered back to Bob from node A');
    expectOnce(statusIds(bobThird, 'delivered'), [back, toA]);
  }, 600_000);

  it('kills the node sending the outbox mid-outbox: the other node sends the rest, nothing lost, nothing twice at Bob', async () => {
    const s = await setup('fedkill');
    const [nodeA, nodeB] = s.nodes;
    const alice = await client(nodeA.url, s.aliceKey);
    const bob = await client(s.relay2Url, s.bobKey);
    // Resolved while relay 2 answers (Bob's card is in its directory).
    await alice.session.request('ohan.relay.resolve', { identity: s.bobKey.did });

    // Relay 2 stops answering: whatever node sends the outbox waits on its forwards, holding the lease.
    s.relay2.child.kill('SIGSTOP');
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(((await alice.session.send([s.bobKey.did], { i })) as { message_id: string }).message_id);
    let holder: RelayProcess | undefined;
    await waitFor(
      async () => {
        for (const node of s.nodes)
          if ((await peerMetric(node.url, 'wmp_relay_peer_outbox_sending')) === 1) holder = node;
        return holder !== undefined;
      },
      60_000,
      'a node sending the outbox',
    );
    const survivor = holder === nodeA ? nodeB : nodeA;
    expect(await peerMetric(survivor.url, 'wmp_relay_peer_outbox_sending')).toBe(0);
    expect(await peerMetric(survivor.url, 'wmp_relay_peer_outbox_messages')).toBe(20);
    holder!.child.kill('SIGKILL');
    await holder!.exited;
    s.balancer.target = Number(new URL(survivor.url).port);
    s.relay2.child.kill('SIGCONT');

    // The survivor takes the outbox over and sends the rest.
    await waitFor(() => ids.every((id) => messageIds(bob).includes(id)), 120_000, 'Bob to get every message');
    await waitFor(
      async () => (await peerMetric(survivor.url, 'wmp_relay_peer_outbox_messages')) === 0,
      60_000,
      'the outbox to empty',
    );
    await relay2Settled(s, 20);
    expectOnce(messageIds(bob), ids);

    // Alice, on the survivor: one `delivered` for each, whichever node passed it on.
    const aliceAgain = holder === nodeA ? await client(survivor.url, s.aliceKey) : alice;
    await waitFor(() => ids.every((id) => statusIds(aliceAgain, 'delivered').includes(id)), 60_000, 'statuses');
    expectOnce(statusIds(aliceAgain, 'delivered'), ids);
  }, 600_000);
});
