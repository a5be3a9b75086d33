// A -> relay 1 -> relay 2 -> B (bench/results/targets.md): the relay-routing load (50 senders,
// 50 receivers, 8 messages in flight per sender until its `delivered` status, receivers ack),
// with the senders at relay 1 and the receivers at relay 2, both relays durable (SQLite, WAL,
// the WAL fsynced after each commit) in processes of their own. Relay 1 routes every did:key it does not hold to
// relay 2 (a static prefix route); relay 2 trusts relay 1 to speak for its senders
// (--peer-trust). Each message is committed at relay 1's outbox, forwarded as a request,
// committed at relay 2, delivered to B, and `delivered` travels back through relay 1 to A.
// Baseline in the same run, interleaved rounds: relay-routing (one relay, SQLite, same clients).
// Target: >= 50% of it; p99 send -> receive latency <= 30 ms paced at 1k msg/s. Each relay's
// process CPU per message over the measured rounds and the machine's Ed25519 sign rate of the
// run are reported beside (a federated message is signed by both relays and verified by relay 2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test-support/services/index.js';
import { cpuInSignsFigure, ed25519SignRate, signRateFigures } from './ed25519-rate.js';
import { type Benchmark, type BenchReport, type Figure, median, percentile } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { FEDERATION_LIMITS, FEDERATION_PEER_BUDGETS } from './servers/federation-budgets.js';
import { closedLoop, type Fleet, PAIRS, paced, relayFleet, WINDOW } from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 800;
const PACED_RATE = 1000;

const ms = (v: number) => Math.round(v * 100) / 100;

const bench: Benchmark = {
  name: 'relay-federation',
  async run(): Promise<BenchReport> {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-relay-federation-'));
    const [limits, peerBudgets] = [FEDERATION_LIMITS, FEDERATION_PEER_BUDGETS];
    const children: BenchChild[] = [];
    const fleets: Fleet[] = [];
    try {
      const [p1, p2] = [await freePort(), await freePort()];
      const [u1, u2] = [`http://127.0.0.1:${p1}`, `http://127.0.0.1:${p2}`];
      const relay1 = await startChild('relay-server.ts', [
        'sqlite',
        join(dir, 'relay1.db'),
        limits,
        JSON.stringify({
          port: p1,
          federation: { peers: [u2], routes: [{ pattern: 'did:key:*', url: u2 }], timings: peerBudgets },
        }),
      ]);
      children.push(relay1);
      const relay2 = await startChild('relay-server.ts', [
        'sqlite',
        join(dir, 'relay2.db'),
        limits,
        JSON.stringify({ port: p2, federation: { trustedPeers: [u1], timings: peerBudgets } }),
      ]);
      children.push(relay2);
      const single = await startChild('relay-server.ts', ['sqlite', join(dir, 'single.db'), limits]);
      children.push(single);

      const federated = await relayFleet(p2, { senderPort: p1 });
      fleets.push(federated);
      const routing = await relayFleet(single.port);
      fleets.push(routing);
      await closedLoop(routing.traffic, WARMUP_MS);
      await closedLoop(federated.traffic, WARMUP_MS);

      const f: number[] = [];
      const r: number[] = [];
      const signs: number[] = [];
      // Process CPU (every thread) of relay 1, relay 2 and the single relay over their own rounds.
      const cpu = [0, 0, 0];
      // SQLite writes (statements in write transactions) and transactions of each relay, same rounds.
      const writes = [0, 0, 0];
      const transactions = [0, 0, 0];
      let federatedMessages = 0;
      let routedMessages = 0;
      const statsNow = async () => Promise.all([relay1, relay2, single].map((c) => c.ask('stats')));
      const tally = (before: Record<string, number>[], after: Record<string, number>[], relays: number[]) => {
        for (const i of relays) {
          cpu[i]! += after[i]!.cpuMicros! - before[i]!.cpuMicros!;
          writes[i]! += after[i]!.operations! - before[i]!.operations!;
          transactions[i]! += after[i]!.transactions! - before[i]!.transactions!;
        }
      };
      for (let round = 0; round < ROUNDS; round++) {
        signs.push(ed25519SignRate());
        let before = await statsNow();
        let done = routing.traffic.completed;
        r.push(await closedLoop(routing.traffic, ROUND_MS));
        routedMessages += routing.traffic.completed - done;
        let after = await statsNow();
        tally(before, after, [2]);
        before = after;
        done = federated.traffic.completed;
        f.push(await closedLoop(federated.traffic, ROUND_MS));
        federatedMessages += federated.traffic.completed - done;
        after = await statsNow();
        tally(before, after, [0, 1]);
      }
      const signRate = median(signs);
      const perFederated = (i: number) => cpu[i]! / Math.max(1, federatedMessages);
      const perRouted = cpu[2]! / Math.max(1, routedMessages);
      const relayStats = await Promise.all([relay1, relay2].map((c) => c.ask('stats')));
      // At most what the closed loop keeps in flight: a relay slower than the rate gets fewer
      // messages (the achieved rate says so) instead of overflowing relay 1's outbox for relay 2
      // (a queue like any other: maxQueued entries).
      const latency = await paced(federated.traffic, PACED_RATE, PAIRS * WINDOW);
      const routingLatency = await paced(routing.traffic, PACED_RATE);
      const baseline = { name: 'relay-routing (one relay, SQLite), 100 connections', value: median(r), unit: 'msg/s' };
      const ratio = median(f) / baseline.value;
      const p99 = percentile(latency.samples, 99);
      const cpuFigures: Figure[] = [
        { name: 'relay 1 process CPU per federated message', value: perFederated(0), unit: 'µs' },
        { name: 'relay 2 process CPU per federated message', value: perFederated(1), unit: 'µs' },
        { name: 'single relay (relay-routing) process CPU per message', value: perRouted, unit: 'µs' },
        ...signRateFigures(signRate),
        cpuInSignsFigure(perFederated(0) + perFederated(1), signRate, {
          name: 'both relays CPU per federated message / Ed25519 sign',
          target: undefined,
        }),
      ];
      return {
        name: 'relay-federation',
        baseline,
        figures: [
          baseline,
          {
            name: 'A -> relay 1 -> relay 2 -> B (both SQLite), 100 connections, acked',
            value: median(f),
            unit: 'msg/s',
            ratio,
            target: '>= 0.50 of relay-routing',
            met: ratio >= 0.5,
          },
          {
            name: `relay-routing p99 latency at ${PACED_RATE} msg/s`,
            value: ms(percentile(routingLatency.samples, 99)),
            unit: 'ms',
          },
          {
            name: `federation rate achieved when paced at ${PACED_RATE} msg/s`,
            value: latency.achieved,
            unit: 'msg/s',
          },
          {
            name: `federation p50 latency at ${PACED_RATE} msg/s`,
            value: ms(percentile(latency.samples, 50)),
            unit: 'ms',
          },
          {
            name: `federation p99 latency at ${PACED_RATE} msg/s`,
            value: ms(p99),
            unit: 'ms',
            target: '<= 30 ms',
            met: p99 <= 30,
          },
          ...cpuFigures,
        ],
        conditions: {
          pairs: PAIRS,
          inFlightPerSender: WINDOW,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          store: 'SQLite files, WAL, fsync after each commit off the loop, group commit (each relay its own)',
          slotFreedAt: 'the delivered status, back through relay 1',
          durability: 'acknowledged at each hop only after the fsync of the COMMIT that holds the message',
          relayChain: 'both entries signed (Ed25519); relay 2 verifies relay 1 entry',
          ed25519SignsPerSecond: Math.round(signRate),
          // Which .cpuprofile is whose, when BENCH_RELAY_FLAGS profiles the relays.
          relayPids: [relay1, relay2, single].map((c) => c.process.pid!).join(' '),
          routedByRelay: relayStats.map((x) => x.routed!).join(' '),
          // Per message of the measured rounds: relay 1, relay 2, the single relay.
          sqliteWritesPerMessage: [0, 1, 2]
            .map((i) => (writes[i]! / Math.max(1, i === 2 ? routedMessages : federatedMessages)).toFixed(2))
            .join(' '),
          sqliteTransactionsPerMessage: [0, 1, 2]
            .map((i) => (transactions[i]! / Math.max(1, i === 2 ? routedMessages : federatedMessages)).toFixed(3))
            .join(' '),
          roundsFederation: f.map(Math.round).join(' '),
          roundsRouting: r.map(Math.round).join(' '),
          clientErrorFrames: federated.traffic.errors,
        },
      };
    } finally {
      for (const fl of fleets) fl.close();
      for (const c of children) await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
