// A wmp-relay cluster under faults (issue 14): a node SIGKILLed mid-load, Redis SIGKILLed and
// restarted, PostgreSQL stopped with -m immediate and restarted, two nodes resuming one token at
// once. A checker records every acknowledged send and every delivery per connection: nothing
// acknowledged may be lost, nothing delivered twice on one connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { health, startCluster, type TestCluster } from './fixtures/cluster.js';
import { DeliveryChecker } from './fixtures/delivery-checker.js';
import { type Client, connectPeer, disconnect, openClient } from './fixtures/relay-process.js';

let cluster: TestCluster;
/** The node URLs; a killed node's slot gets its replacement. */
const urls: string[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  cluster = await startCluster('faults');
  for (const node of await Promise.all(['f-a', 'f-b', 'f-c'].map((id) => cluster.start(id)))) urls.push(node.url);
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.peer.close().catch(() => undefined);
  await cluster?.destroy();
}, 60_000);

async function client(url: string): Promise<Client> {
  const c = await openClient(url);
  clients.push(c);
  return c;
}

/** A recipient whose deliveries the checker sees, by connection (`connection` moves on at each resume). */
async function recipient(url: string, checker: DeliveryChecker) {
  const c = await client(url);
  const state = { client: c, connection: 0 };
  c.session.on('message', (m) => {
    checker.delivered(state.connection, (m.body as { n: number }).n);
    // Acknowledged as a client does, so the queue (a sender's share of it) does not fill.
    void c.session
      .notify('wmp.message.ack', { message_ids: [(m.wmp as { message_id: string }).message_id], status: 'received' })
      .catch(() => undefined);
  });
  return state;
}

/**
 * Sends {n} to `to` through the node at `url`, one at a time, until stopped; records each
 * acknowledged one. Errors (the fault) are collected; after one the loop goes on once the node
 * answers /health again (its own state), so a refusing relay is not spun on.
 */
function sender(from: Client, url: string, to: string, checker: DeliveryChecker) {
  let stopped = false;
  let n = 0;
  const errors: { code?: number; message?: string }[] = [];
  const done = (async () => {
    while (!stopped) {
      const mine = ++n;
      try {
        await from.session.send([to], { n: mine });
        checker.acknowledged(mine);
      } catch (error) {
        errors.push(error as { code?: number; message?: string });
        await health(url).catch(() => undefined);
      }
    }
  })();
  return {
    errors,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Waits until the checker has seen `count` acknowledged sends. */
async function acknowledged(checker: DeliveryChecker, count: number): Promise<void> {
  await expect.poll(() => checker.acknowledgedCount, { timeout: 30_000 }).toBeGreaterThanOrEqual(count);
}

describe('a wmp-relay cluster under faults', { timeout: 120_000 }, () => {
  it("loses nothing acknowledged when the recipient's node is SIGKILLed and it resumes on another", async () => {
    const checker = new DeliveryChecker();
    const alice = await client(urls[0]!);
    const bob = await recipient(urls[1]!, checker);
    const load = sender(alice, urls[0]!, bob.client.keypair.did, checker);
    await acknowledged(checker, 100);

    const victim = cluster.nodes.find((n) => n.url === urls[1])!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    await acknowledged(checker, checker.acknowledgedCount + 50); // still taken (queued) meanwhile
    bob.connection = 1;
    await bob.client.session.resume(await connectPeer(urls[2]!));
    await acknowledged(checker, checker.acknowledgedCount + 100);
    await load.stop();

    await expect.poll(() => checker.missing(), { timeout: 30_000 }).toBe(0);
    const report = checker.report();
    expect(report.lost).toEqual([]);
    expect(report.duplicated).toEqual([]);
    expect(load.errors).toEqual([]); // alice's node never went away
    urls[1] = (await cluster.start('f-b2')).url;
  });

  it('loses nothing when Redis is SIGKILLed and restarted; delivery resumes within the safety poll', async () => {
    const checker = new DeliveryChecker();
    const alice = await client(urls[0]!);
    const bob = await recipient(urls[1]!, checker);
    const load = sender(alice, urls[0]!, bob.client.keypair.did, checker);
    await acknowledged(checker, 50);

    await cluster.redis.kill();
    await expect.poll(async () => (await health(urls[0]!)).coordination, { timeout: 20_000 }).toBe('degraded');
    // Durable routing goes on without Redis (bob hears of it by the safety poll).
    await acknowledged(checker, checker.acknowledgedCount + 50);
    await expect.poll(() => checker.missing(), { timeout: 20_000 }).toBe(0);

    await cluster.redis.restart();
    await expect.poll(async () => (await health(urls[1]!)).coordination, { timeout: 20_000 }).toBe('ok');
    await acknowledged(checker, checker.acknowledgedCount + 50);
    await load.stop();
    await expect.poll(() => checker.missing(), { timeout: 20_000 }).toBe(0);
    const report = checker.report();
    expect(report.lost).toEqual([]);
    expect(report.duplicated).toEqual([]);
    // While wake-ups were down bob heard of messages by the safety poll only, so his unread share
    // of the queue may have filled: then the sender is told so (-31014), nothing is dropped.
    expect(load.errors.filter((e) => e.code !== -31014)).toEqual([]);
  });

  it('fails writes with typed errors while PostgreSQL is down (-m immediate), loses nothing acknowledged', async () => {
    const checker = new DeliveryChecker();
    const alice = await client(urls[0]!);
    const bob = await recipient(urls[1]!, checker);
    const load = sender(alice, urls[0]!, bob.client.keypair.did, checker);
    await acknowledged(checker, 50);

    await cluster.postgres.stop({ mode: 'immediate' });
    await expect.poll(() => load.errors.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(5);
    // Every refusal is a JSON-RPC error with a code and a fixed message, never a dropped request.
    for (const e of load.errors) {
      expect(typeof e.code).toBe('number');
      expect(e.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres:/);
    }
    expect((await fetch(`${urls[0]}/health`)).status).toBeLessThan(600); // still answering

    await cluster.postgres.start();
    const before = checker.acknowledgedCount;
    await acknowledged(checker, before + 50);
    await load.stop();
    await expect.poll(() => checker.missing(), { timeout: 30_000 }).toBe(0);
    const report = checker.report();
    expect(report.lost).toEqual([]);
    expect(report.duplicated).toEqual([]);
  });

  it('lets exactly one of two nodes resuming the same token at once win', async () => {
    const bob = await client(urls[0]!);
    const token = bob.session.resumptionToken!;
    await disconnect(urls[0]!, bob.peer);
    const [one, two] = await Promise.all([connectPeer(urls[1]!), connectPeer(urls[2]!)]);
    const params = {
      wmp: { version: '0.1', sender: bob.keypair.did },
      session_id: bob.session.id,
      resumption_token: token,
    };
    const outcomes = await Promise.all(
      [one, two].map((peer) =>
        peer.request('wmp.session.resume', params).then(
          () => 'resumed',
          (e: { code?: number }) => e.code,
        ),
      ),
    );
    expect(outcomes.sort()).toEqual([-31000, 'resumed'].sort());
    await Promise.all([one.close(), two.close()]);
  });
});
