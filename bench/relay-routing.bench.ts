// `wmp.message.deliver` A -> B through the relay over WebSocket: 100 connections (50 senders,
// 50 receivers, sender i -> receiver i), every client authenticated (signed challenge) and
// registered. Senders offer {messaging, relay, offline} like any relay client, so each message
// also earns its sender a `delivered` status; receivers acknowledge with `wmp.message.ack`
// (what they got in one event-loop turn, in one ack), as a real client does: without acks the
// durable queues only grow. The relay runs in its own process (bench/servers/relay-server.ts).
//
// Throughput: closed loop, 8 messages in flight per sender (until its `delivered` status; on the
// forwarder, until received), interleaved rounds against the bare baselines of the same run
// (docs/architecture.md, "Performance"), on the same client code and the same frames:
// - relay-routing (SQLite store: WAL, fsync after COMMIT off the loop, group commit): >= 50% of the lower of a
//   bare `ws` forwarder (bench/servers/ws-forwarder.ts) and batched SQLite writes of the same
//   stored messages as the relay makes them durable and removes them (same table, opened by the
//   relay's own `openDatabase`, durable at each COMMIT): a transaction of 100 inserts, then one that deletes
//   the previous 100 as acks do (one DELETE ... RETURNING per recipient, ids as a JSON array, the
//   relay's ack statement), so the table stays as small as the relay's. Latency send -> receive at
//   B, paced at half the relay's measured capacity (its median closed-loop rate of this run):
//   p99 <= 10 ms. Paced at 5k msg/s too (at most 5,000 incomplete; the achieved rate is printed),
//   without a target.
//   (bench/results/targets.md). Latency at 1k msg/s is printed too, without a target.
// - relay-routing-memory (memory store): >= 40% of the bare `ws` forwarder.
// relay-routing also runs, in the same rounds, a relay on the memory store (target: >= 1.5x the
// SQLite relay's rate) and the machine's Ed25519 sign rate (bench/ed25519-rate.ts), to report
// the relay's CPU per message in signs of this run (target <= 3). The SQLite relay's figure
// against the brokers a user would run instead is bench/peers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../packages/relay-server/src/sqlite.js';
import { cpuInSignsFigure, ed25519SignRate, signRateFigures } from './ed25519-rate.js';
import { type Benchmark, type BenchReport, type Figure, median, percentile } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import {
  closedLoop,
  deliverFrame,
  type Fleet,
  forwarderFleet,
  PAIRS,
  paced,
  relayFleet,
  WINDOW,
} from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 600;
const PACED_RATE = 5000;
const SQLITE_BATCH = 100;

/**
 * Bare batched writes of the stored messages, as the relay writes them: a transaction of 100
 * inserts, then a transaction deleting the previous batch on ack (one DELETE per recipient, with
 * the ids as a JSON array and RETURNING, as the relay's ack does). Same table; each COMMIT fsyncs
 * (`synchronous=FULL`), as durable as the relay's fsync after COMMIT. The rate counts messages
 * inserted and deleted again.
 */
function sqliteWrites(path: string, recipients: string[], senders: string[], body: string) {
  const db = openDatabase(path);
  const insert = db.prepare(
    'INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const remove = db.prepare<[string, string]>(
    `DELETE FROM wmp_messages WHERE recipient = ? AND message_id IN (SELECT value FROM json_each(?))
     RETURNING recipient, seq, message_id, sender, bytes, delivered, notify`,
  );
  const bytes = Buffer.byteLength(body);
  const expiresAt = Date.now() + 24 * 3600_000;
  const seqs = new Array<number>(PAIRS).fill(0);
  let n = 0;
  /** The ids of the last batch inserted, per recipient: what the next acks delete. */
  let acked = new Map<string, string[]>();
  const insertBatch = db.transaction(() => {
    const ids = new Map<string, string[]>();
    for (let k = 0; k < SQLITE_BATCH; k++, n++) {
      const pair = n % PAIRS;
      const id = `msg-${n.toString(36).padStart(22, '0')}`;
      insert.run(recipients[pair], ++seqs[pair]!, id, senders[pair], expiresAt, bytes, body);
      const list = ids.get(recipients[pair]!);
      if (list) list.push(id);
      else ids.set(recipients[pair]!, [id]);
    }
    return ids;
  });
  const deleteBatch = db.transaction((ids: Map<string, string[]>) => {
    let removed = 0;
    for (const [recipient, list] of ids) removed += remove.all(recipient, JSON.stringify(list)).length;
    return removed;
  });
  const step = (): number => {
    const next = insertBatch();
    const removed = deleteBatch(acked);
    if (acked.size > 0 && removed !== SQLITE_BATCH) throw new Error(`deleted ${removed} of ${SQLITE_BATCH} acked rows`);
    acked = next;
    return removed;
  };
  return {
    rate(ms: number): number {
      const start = performance.now();
      let rows = 0;
      while (performance.now() - start < ms) rows += step();
      return (rows * 1000) / (performance.now() - start);
    },
    close: () => db.close(),
  };
}

const ms = (v: number) => Math.round(v * 100) / 100;

function routingBench(store: 'sqlite' | 'memory'): Benchmark {
  const name = store === 'sqlite' ? 'relay-routing' : 'relay-routing-memory';
  return {
    name,
    async run(): Promise<BenchReport> {
      const dir = mkdtempSync(join(tmpdir(), `wmp-bench-${name}-`));
      // The per-identity request rate (default 200/s) would throttle a 50-sender load test:
      // raised far out of the way; the limiter still runs on every request.
      const limits = { requestsPerSecond: 1_000_000, requestBurst: 1_000_000 };
      const args = store === 'sqlite' ? ['sqlite', join(dir, 'relay.db')] : ['memory', '-'];
      let relay: BenchChild | undefined;
      let forwarder: BenchChild | undefined;
      // relay-routing also runs the memory store's relay in its rounds: their ratio is a target.
      let memoryRelay: BenchChild | undefined;
      const fleets: Fleet[] = [];
      try {
        relay = await startChild('relay-server.ts', [...args, JSON.stringify(limits)]);
        forwarder = await startChild('ws-forwarder.ts');
        const subject = await relayFleet(relay.port);
        fleets.push(subject);
        const bare = await forwarderFleet(forwarder.port, subject.senders, subject.receivers);
        fleets.push(bare);
        if (store === 'sqlite')
          memoryRelay = await startChild('relay-server.ts', ['memory', '-', JSON.stringify(limits)]);
        const memory = memoryRelay && (await relayFleet(memoryRelay.port));
        if (memory) fleets.push(memory);

        await closedLoop(bare.traffic, WARMUP_MS);
        await closedLoop(subject.traffic, WARMUP_MS);
        if (memory) await closedLoop(memory.traffic, WARMUP_MS);
        const stored = subject.sample();
        if (stored === undefined) throw new Error('no message reached a receiver');
        const inserts =
          store === 'sqlite'
            ? sqliteWrites(
                join(dir, 'baseline.db'),
                subject.receivers.map((c) => c.did),
                subject.senders.map((c) => c.did),
                stored,
              )
            : undefined;
        inserts?.rate(WARMUP_MS);

        const s: number[] = [];
        const w: number[] = [];
        const q: number[] = [];
        const m: number[] = [];
        const signs: number[] = [];
        // The relays' own CPU (all their threads) over their measured rounds only.
        const cpu = { micros: 0, routed: 0 };
        const memoryCpu = { micros: 0, routed: 0 };
        const relayRound = async (child: BenchChild, fleet: Fleet, into: typeof cpu) => {
          const before = await child.ask('stats');
          const rate = await closedLoop(fleet.traffic, ROUND_MS);
          const after = await child.ask('stats');
          into.micros += after.cpuMicros! - before.cpuMicros!;
          into.routed += after.routed! - before.routed!;
          return rate;
        };
        for (let round = 0; round < ROUNDS; round++) {
          signs.push(ed25519SignRate());
          w.push(await closedLoop(bare.traffic, ROUND_MS));
          if (inserts) q.push(inserts.rate(ROUND_MS));
          s.push(await relayRound(relay, subject, cpu));
          if (memoryRelay && memory) m.push(await relayRound(memoryRelay, memory, memoryCpu));
        }
        const cpuPerMessage = cpu.micros / cpu.routed;
        const signRate = median(signs);
        inserts?.close();
        const bareLatency = await paced(bare.traffic, PACED_RATE);
        const latency = await paced(subject.traffic, PACED_RATE);
        // The target's rate: half of what this relay carried in this run's closed-loop rounds.
        const halfRate = Math.max(1, Math.round(median(s) / 2));
        const half = await paced(subject.traffic, halfRate);
        const stats = await relay.ask('stats');

        const forwarded = { name: 'bare ws forwarder, 100 connections', value: median(w), unit: 'msg/s' };
        const sqlite = {
          name: `batched SQLite inserts + deletes on ack (${SQLITE_BATCH} per transaction)`,
          value: median(q),
          unit: 'msg/s',
        };
        const lower = inserts && sqlite.value < forwarded.value ? sqlite : forwarded;
        const want = store === 'sqlite' ? 0.5 : 0.4;
        const ratio = median(s) / lower.value;
        const label = store === 'sqlite' ? 'SQLite store' : 'memory store';
        const figures: Figure[] = [forwarded, ...(inserts ? [sqlite] : [])];
        figures.push({
          name: `wmp.message.deliver through the relay (${label}), 100 connections, acked`,
          value: median(s),
          unit: 'msg/s',
          ratio,
          target: `>= ${want.toFixed(2)} of baseline`,
          met: ratio >= want,
        });
        figures.push({
          name: 'relay process CPU per routed message (all threads, measured rounds)',
          value: cpuPerMessage,
          unit: 'µs',
        });
        figures.push(...signRateFigures(signRate), cpuInSignsFigure(cpuPerMessage, signRate));
        if (memory) {
          const memoryRatio = median(m) / median(s);
          figures.push(
            {
              name: 'wmp.message.deliver through the relay (memory store), same rounds',
              value: median(m),
              unit: 'msg/s',
            },
            {
              name: 'memory-store relay process CPU per routed message (measured rounds)',
              value: memoryCpu.micros / memoryCpu.routed,
              unit: 'µs',
            },
            {
              name: 'memory store / SQLite store (same run)',
              value: memoryRatio,
              unit: 'x',
              target: '>= 1.5',
              met: memoryRatio >= 1.5,
            },
          );
        }
        const latencyFigure = (who: string, rate: number, p: number, samples: number[]): Figure => ({
          name: `${who} p${p} latency at ${rate} msg/s`,
          value: ms(percentile(samples, p)),
          unit: 'ms',
        });
        const p99 = percentile(half.samples, 99);
        figures.push(
          latencyFigure('bare ws forwarder', PACED_RATE, 50, bareLatency.samples),
          latencyFigure('bare ws forwarder', PACED_RATE, 99, bareLatency.samples),
          { name: `relay rate achieved when paced at ${PACED_RATE} msg/s`, value: latency.achieved, unit: 'msg/s' },
          latencyFigure('relay', PACED_RATE, 50, latency.samples),
          latencyFigure('relay', PACED_RATE, 99, latency.samples),
          {
            name: `relay rate achieved when paced at ${halfRate} msg/s (half its capacity)`,
            value: half.achieved,
            unit: 'msg/s',
          },
          latencyFigure('relay (half its capacity)', halfRate, 50, half.samples),
          {
            ...latencyFigure('relay (half its capacity)', halfRate, 99, half.samples),
            ...(store === 'sqlite' ? { target: '<= 10 ms', met: p99 <= 10 } : {}),
          },
        );
        return {
          name,
          baseline: lower,
          figures,
          conditions: {
            pairs: PAIRS,
            inFlightPerSender: WINDOW,
            rounds: ROUNDS,
            roundMs: ROUND_MS,
            deliverFrameBytes: Buffer.byteLength(
              deliverFrame(subject.senders[0]!.wmp, subject.receivers[0]!.did, 0)(performance.now()),
            ),
            forwardedFrameBytes: Buffer.byteLength(stored),
            deliverForm: 'notification',
            acks: 'wmp.message.ack per receiver per event-loop turn',
            statuses: 'delivered, to senders (offline negotiated)',
            slotFreedAt: 'relay: the delivered status; forwarder: receipt',
            store:
              store === 'sqlite' ? 'SQLite file, WAL, fsync after each commit off the loop, group commit' : 'memory',
            durability:
              store === 'sqlite'
                ? 'acknowledged (delivered status) only after the fsync of the COMMIT that holds the message'
                : 'none (memory store)',
            relayChain: 'every entry signed (Ed25519)',
            ed25519SignsPerSecond: Math.round(signRate),
            signRounds: signs.map(Math.round).join(' '),
            relayRouted: stats.routed!,
            // Which .cpuprofile is whose, when BENCH_RELAY_FLAGS profiles the relays.
            relayPid: relay.process.pid!,
            ...(memoryRelay
              ? {
                  memoryRelayPid: memoryRelay.process.pid!,
                  memoryRelayRouted: (await memoryRelay.ask('stats')).routed!,
                  memoryRelayCpuMicrosPerRouted: Math.round((memoryCpu.micros / memoryCpu.routed) * 10) / 10,
                }
              : {}),
            relayDeliveries: stats.deliveries!,
            relayCpuMicrosPerRouted: Math.round(cpuPerMessage * 10) / 10,
            relayErrors: stats.errors!,
            ...(stats.transactions
              ? {
                  relayWritesPerTransaction: Math.round((stats.operations! / stats.transactions) * 10) / 10,
                  relayWritesPerRouted: Math.round((stats.operations! / stats.routed!) * 100) / 100,
                }
              : {}),
            clientErrorFrames: subject.traffic.errors,
            roundsRelay: s.map(Math.round).join(' '),
            roundsForwarder: w.map(Math.round).join(' '),
            ...(inserts ? { roundsSqlite: q.map(Math.round).join(' ') } : {}),
            ...(memory ? { roundsMemoryRelay: m.map(Math.round).join(' ') } : {}),
          },
        };
      } finally {
        for (const f of fleets) f.close();
        await relay?.close();
        await memoryRelay?.close();
        await forwarder?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export default [routingBench('sqlite'), routingBench('memory')];
