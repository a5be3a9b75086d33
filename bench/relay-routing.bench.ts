// `wmp.message.deliver` A -> B through the relay over WebSocket: 100 connections (50 senders,
// 50 receivers, sender i -> receiver i), every client authenticated (signed challenge) and
// registered. Senders offer {messaging, relay, offline} like any relay client, so each message
// also earns its sender a `delivered` status; receivers acknowledge with `wmp.message.ack`
// (what they got in one event-loop turn, in one ack), as a real client does: without acks the
// durable queues only grow. The relay runs in its own process (bench/servers/relay-server.ts).
//
// Throughput: closed loop, 8 messages in flight per sender (until its `delivered` status; on the
// forwarder, until received), interleaved rounds against the bare baselines of the same run
// (DESIGN §8), on the same client code and the same frames:
// - relay-routing (SQLite store: WAL, synchronous=FULL, group commit): >= 50% of the lower of a
//   bare `ws` forwarder (bench/servers/ws-forwarder.ts) and batched SQLite inserts of the same
//   stored messages (same pragmas and table, transactions of 100). Latency send -> receive at B,
//   paced at 5k msg/s (at most 5,000 incomplete; the achieved rate is printed): p99 <= 20 ms.
//   Latency at 1k msg/s is printed too, without a target.
// - relay-routing-memory (memory store): >= 40% of the bare `ws` forwarder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../packages/relay-server/src/sqlite.js';
import { type Benchmark, type BenchReport, type Figure, median, percentile } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { openClient, openSocket, type WmpClient } from './servers/wmp-client.js';

const PAIRS = 50;
/** Messages in flight per sender in the closed loop (until complete, see Traffic). */
const WINDOW = 8;
const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 600;
const PACED_RATE = 5000;
/** A rate well under the relay's capacity here, for its unloaded latency (no target). */
const LOW_RATE = 1000;
const PACED_WARMUP_MS = 500;
const PACED_MS = 3000;
const DRAIN_MS = 15_000;
/** Most incomplete messages while pacing (one second at the paced rate). */
const PACED_MAX_BACKLOG = 5000;
const SQLITE_BATCH = 100;
/** Body padding: a deliver frame of about 940 bytes, a forwarded (relay-signed) one of about 1.45 KB. */
const PAD = 'x'.repeat(600);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Closed-loop and paced traffic over 50 sender -> receiver pairs. A message is received when it
 * reaches its receiver (latency is measured there) and complete when its sender may reuse the
 * slot: on the bare forwarder at receipt, through the relay when the sender gets `delivered`
 * (ack processed), so a round counts only messages whose whole cycle the relay finished.
 */
class Traffic {
  readonly outstanding = new Int32Array(PAIRS);
  received = 0;
  completed = 0;
  errors = 0;
  closedLoop = false;
  samples: number[] | undefined;
  sampleFrom = Number.POSITIVE_INFINITY;
  readonly #send: (pair: number, t: number) => void;

  constructor(send: (pair: number, t: number) => void) {
    this.#send = send;
  }

  send(pair: number): void {
    this.outstanding[pair]!++;
    this.#send(pair, performance.now());
  }

  /** A receiver got a message stamped `t`. */
  receive(t: number): void {
    this.received++;
    if (this.samples && t >= this.sampleFrom) this.samples.push(performance.now() - t);
  }

  /** Pair `pair`'s oldest message is done: its slot is free again. */
  complete(pair: number): void {
    this.outstanding[pair]!--;
    this.completed++;
    if (this.closedLoop) this.send(pair);
  }

  inFlight(): number {
    return this.outstanding.reduce((a, b) => a + b, 0);
  }
}

/** Waits until every message sent is complete; one that never is fails the bench. */
async function drain(traffic: Traffic): Promise<void> {
  const until = performance.now() + DRAIN_MS;
  while (traffic.inFlight() > 0) {
    if (performance.now() > until) {
      throw new Error(
        `${traffic.inFlight()} message(s) never completed (${traffic.received} received, ${traffic.errors} error frames)`,
      );
    }
    await sleep(5);
  }
}

/** Messages completed per second with WINDOW in flight per sender, over `ms`. */
async function closedLoop(traffic: Traffic, ms: number): Promise<number> {
  traffic.closedLoop = true;
  const before = traffic.completed;
  const start = performance.now();
  for (let pair = 0; pair < PAIRS; pair++) for (let k = 0; k < WINDOW; k++) traffic.send(pair);
  await sleep(ms);
  const count = traffic.completed - before;
  const elapsed = performance.now() - start;
  traffic.closedLoop = false;
  await drain(traffic);
  return (count * 1000) / elapsed;
}

/**
 * Latencies (ms) of messages sent at `rate` per second, round robin over the senders, after a
 * warm-up. Open loop, except that no more than PACED_MAX_BACKLOG messages are left incomplete: a
 * server that cannot keep up gets fewer messages (`achieved` says how many per second), not a
 * backlog that outlives the bench.
 */
async function paced(traffic: Traffic, rate: number): Promise<{ samples: number[]; achieved: number }> {
  const samples: number[] = [];
  const start = performance.now();
  traffic.samples = samples;
  traffic.sampleFrom = start + PACED_WARMUP_MS;
  const end = start + PACED_WARMUP_MS + PACED_MS;
  let due = 0;
  let measured = 0;
  let pair = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (const until = Math.floor(((Math.min(now, end) - start) * rate) / 1000); due < until; due++) {
        if (traffic.inFlight() >= PACED_MAX_BACKLOG) continue;
        traffic.send(pair);
        pair = (pair + 1) % PAIRS;
        if (now >= traffic.sampleFrom) measured++;
      }
      if (now >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await drain(traffic);
  traffic.samples = undefined;
  return { samples, achieved: (measured * 1000) / PACED_MS };
}

/** The deliver frame of `sender` to `to`, split around the send time it carries in its body. */
function deliverFrame(sender: WmpClient['wmp'], to: string, pair: number): (t: number) => string {
  const head =
    `{"jsonrpc":"2.0","method":"wmp.message.deliver","params":{"wmp":${JSON.stringify(sender)},` +
    `"to":${JSON.stringify([to])},"content_type":"application/json","body":{"pair":${pair},"pad":"${PAD}","t":`;
  return (t) => `${head}${t}}}}`;
}

type Body = { pair: number; t: number };
type Incoming = {
  method?: string;
  error?: unknown;
  params?: { body?: Body; status?: string; wmp?: { message_id?: string } };
};

interface Fleet {
  readonly traffic: Traffic;
  /** A frame as the relay forwards (and stores) it, for the SQLite baseline's rows. */
  readonly sample: () => string | undefined;
  close(): void;
}

/** Opens `n` registered relay clients, a few handshakes at a time. */
async function openClients(url: string, n: number): Promise<WmpClient[]> {
  const clients: WmpClient[] = [];
  for (let i = 0; i < n; i += 10) {
    clients.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => openClient(url)))));
  }
  return clients;
}

/** 50 senders and 50 receivers on the relay; receivers ack what one turn brought, in one ack. */
async function relayFleet(port: number): Promise<Fleet & { senders: WmpClient[]; receivers: WmpClient[] }> {
  const url = `ws://127.0.0.1:${port}/wmp`;
  const receivers = await openClients(url, PAIRS);
  const senders = await openClients(url, PAIRS);
  const frames = senders.map((s, pair) => deliverFrame(s.wmp, receivers[pair]!.did, pair));
  const traffic = new Traffic((pair, t) => senders[pair]!.socket.send(frames[pair]!(t)));
  let sample: string | undefined;
  for (const receiver of receivers) {
    const ackHead = `{"jsonrpc":"2.0","method":"wmp.message.ack","params":{"wmp":${JSON.stringify(receiver.wmp)},"message_ids":`;
    const pending: string[] = [];
    const flush = () => {
      while (pending.length > 0)
        receiver.socket.send(`${ackHead}${JSON.stringify(pending.splice(0, 500))},"status":"received"}}`);
    };
    receiver.socket.on('message', (data) => {
      const text = String(data);
      const m = JSON.parse(text) as Incoming;
      if (m.method !== 'wmp.message.deliver') {
        if (m.error) traffic.errors++;
        return;
      }
      sample ??= text;
      if (pending.length === 0) setImmediate(flush);
      pending.push(m.params!.wmp!.message_id!);
      traffic.receive(m.params!.body!.t);
    });
  }
  for (const [pair, sender] of senders.entries()) {
    sender.socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Incoming;
      if (m.method === 'wmp.message.status' && m.params?.status === 'delivered') traffic.complete(pair);
      else if (m.method === 'wmp.message.status' || m.error) traffic.errors++;
    });
  }
  return {
    traffic,
    senders,
    receivers,
    sample: () => sample,
    close: () => {
      for (const c of [...senders, ...receivers]) c.socket.terminate();
    },
  };
}

/** The same identities, frames and client code on the bare forwarder (no handshake, no acks). */
async function forwarderFleet(port: number, senders: WmpClient[], receivers: WmpClient[]): Promise<Fleet> {
  const open = (did: string) => openSocket(`ws://127.0.0.1:${port}/?id=${encodeURIComponent(did)}`);
  const rx = await Promise.all(receivers.map((r) => open(r.did)));
  const tx = await Promise.all(senders.map((s) => open(s.did)));
  const frames = senders.map((s, pair) => deliverFrame(s.wmp, receivers[pair]!.did, pair));
  const traffic = new Traffic((pair, t) => tx[pair]!.send(frames[pair]!(t)));
  for (const socket of rx) {
    socket.on('message', (data) => {
      const m = JSON.parse(String(data)) as Incoming;
      traffic.receive(m.params!.body!.t);
      traffic.complete(m.params!.body!.pair);
    });
  }
  return {
    traffic,
    sample: () => undefined,
    close: () => {
      for (const s of [...rx, ...tx]) s.terminate();
    },
  };
}

/** Bare batched inserts of the stored messages: same pragmas, same table, transactions of 100. */
function sqliteInserts(path: string, recipients: string[], senders: string[], body: string) {
  const db = openDatabase(path);
  const insert = db.prepare(
    'INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const bytes = Buffer.byteLength(body);
  const expiresAt = Date.now() + 24 * 3600_000;
  const seqs = new Array<number>(PAIRS).fill(0);
  let n = 0;
  const batch = db.transaction(() => {
    for (let k = 0; k < SQLITE_BATCH; k++, n++) {
      const pair = n % PAIRS;
      const id = `msg-${n.toString(36).padStart(22, '0')}`;
      insert.run(recipients[pair], ++seqs[pair]!, id, senders[pair], expiresAt, bytes, body);
    }
  });
  return {
    rate(ms: number): number {
      const start = performance.now();
      let rows = 0;
      while (performance.now() - start < ms) {
        batch();
        rows += SQLITE_BATCH;
      }
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
      const fleets: Fleet[] = [];
      try {
        relay = await startChild('relay-server.ts', [...args, JSON.stringify(limits)]);
        forwarder = await startChild('ws-forwarder.ts');
        const subject = await relayFleet(relay.port);
        fleets.push(subject);
        const bare = await forwarderFleet(forwarder.port, subject.senders, subject.receivers);
        fleets.push(bare);

        await closedLoop(bare.traffic, WARMUP_MS);
        await closedLoop(subject.traffic, WARMUP_MS);
        const stored = subject.sample();
        if (stored === undefined) throw new Error('no message reached a receiver');
        const inserts =
          store === 'sqlite'
            ? sqliteInserts(
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
        for (let round = 0; round < ROUNDS; round++) {
          w.push(await closedLoop(bare.traffic, ROUND_MS));
          if (inserts) q.push(inserts.rate(ROUND_MS));
          s.push(await closedLoop(subject.traffic, ROUND_MS));
        }
        inserts?.close();
        const bareLatency = await paced(bare.traffic, PACED_RATE);
        const latency = await paced(subject.traffic, PACED_RATE);
        const low = await paced(subject.traffic, LOW_RATE);
        const stats = await relay.ask('stats');

        const forwarded = { name: 'bare ws forwarder, 100 connections', value: median(w), unit: 'msg/s' };
        const sqlite = {
          name: `batched SQLite inserts (${SQLITE_BATCH} per transaction)`,
          value: median(q),
          unit: 'rows/s',
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
        const latencyFigure = (who: string, rate: number, p: number, samples: number[]): Figure => ({
          name: `${who} p${p} latency at ${rate} msg/s`,
          value: ms(percentile(samples, p)),
          unit: 'ms',
        });
        const p99 = percentile(latency.samples, 99);
        figures.push(
          latencyFigure('bare ws forwarder', PACED_RATE, 50, bareLatency.samples),
          latencyFigure('bare ws forwarder', PACED_RATE, 99, bareLatency.samples),
          { name: `relay rate achieved when paced at ${PACED_RATE} msg/s`, value: latency.achieved, unit: 'msg/s' },
          latencyFigure('relay', PACED_RATE, 50, latency.samples),
          {
            ...latencyFigure('relay', PACED_RATE, 99, latency.samples),
            ...(store === 'sqlite' ? { target: '<= 20 ms', met: p99 <= 20 } : {}),
          },
          latencyFigure('relay', LOW_RATE, 50, low.samples),
          latencyFigure('relay', LOW_RATE, 99, low.samples),
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
            store: store === 'sqlite' ? 'SQLite file, WAL, synchronous=FULL, group commit' : 'memory',
            relayRouted: stats.routed!,
            relayDeliveries: stats.deliveries!,
            relayErrors: stats.errors!,
            ...(stats.transactions
              ? { relayWritesPerTransaction: Math.round((stats.operations! / stats.transactions) * 10) / 10 }
              : {}),
            clientErrorFrames: subject.traffic.errors,
            roundsRelay: s.map(Math.round).join(' '),
            roundsForwarder: w.map(Math.round).join(' '),
            ...(inserts ? { roundsSqlite: q.map(Math.round).join(' ') } : {}),
          },
        };
      } finally {
        for (const f of fleets) f.close();
        await relay?.close();
        await forwarder?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export default [routingBench('sqlite'), routingBench('memory')];
