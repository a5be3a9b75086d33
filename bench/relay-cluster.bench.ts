// wmp-relay as a cluster: three nodes (the app itself, bench/servers/cluster-node.ts) on one
// PostgreSQL (fsync on, test-support/services) and one Redis; 50 senders on node 1, their 50
// receivers on node 2 (every message crosses nodes: a PostgreSQL commit, a Redis wake-up, a read
// on the other node), node 3 in the cluster and idle. The same client code, frames, acks and
// `delivered` statuses as bench/relay-routing.
//
// Throughput against the lower of the bare baselines of the same run (docs/architecture.md,
// "Performance"): a bare `ws` forwarder and bare batched PostgreSQL inserts of the same stored rows
// (the store's INSERT, unnest, 100 per transaction). Target >= 50%. Latency send -> receive across
// nodes paced at half the cluster's measured capacity (its median closed-loop rate of the run): p99
// <= 25 ms. The single-node SQLite relay of relay-routing is measured in the same rounds (it must
// not fall). CPU per message (the nodes, PostgreSQL, Redis, over the cluster rounds) is reported
// beside: a shared machine moves the rates more than the work each message costs. The targets on
// it: the cluster's CPU per message (every process) <= 2x the single node's and its rate >= 0.5x
// the single node's, both of the same rounds, with the machine's Ed25519 sign rate of the run
// beside them. BENCH_PG_STATS=1 prints the statements that took PostgreSQL's time and the Redis
// commands of the run; BENCH_LOG_LEVEL=warn shows the nodes' logs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../packages/relay-server/src/postgres.js';
import { startPostgres, startRedis } from '../test-support/services/index.js';
import { cpuInSignsFigure, ed25519SignRate, signRateFigures } from './ed25519-rate.js';
import { type Benchmark, type BenchReport, type Figure, median, percentile } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { type ClusterArm, startClusterArm } from './servers/cluster-arm.js';
import { bareInsertRate } from './servers/postgres-inserts.js';
import { closedLoop, type Fleet, forwarderFleet, PAIRS, paced, relayFleet, WINDOW } from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 800;
// Three nodes take longer to a steady state than one (each node's session cache, prepared
// statements and JIT): first rounds of 369-850 msg/s against 1.2-2.5k after 800 ms of warm-up.
const CLUSTER_WARMUP_MS = 3000;
const ms = (v: number) => Math.round(v * 100) / 100;

/** BENCH_PG_STATS=1: the statements that took the database's time (pg_stat_statements), for profiling. */
async function printStatements(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query(
      'SELECT calls, round(total_exec_time) AS ms, round(mean_exec_time::numeric, 3) AS mean, rows, left(query, 200) AS query FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15',
    );
    for (const r of rows)
      console.error(`${r.calls}\t${r.ms} ms\t${r.mean} ms\t${r.rows}\t${String(r.query).replace(/\s+/g, ' ')}`);
  } finally {
    await client.end();
  }
}

/** BENCH_PG_STATS=1 also prints the Redis commands the run made (INFO commandstats: calls, µs per call). */
async function printRedisCommands(url: string): Promise<void> {
  const { createClient } = await import('@redis/client');
  const client = createClient({ url });
  await client.connect();
  try {
    const info = await client.info('commandstats');
    for (const line of info.split('\n')) {
      const m = /^cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(line.trim());
      if (m) console.error(`redis ${m[1]}\t${m[2]} calls\t${m[3]} µs\t${m[4]} µs/call`);
    }
  } finally {
    await client.quit();
  }
}

const bench: Benchmark = {
  name: 'relay-cluster',
  async run(): Promise<BenchReport> {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-cluster-'));
    // The bare inserts get a server of their own: on the cluster's, their autovacuum and the
    // writing out of their pages would run in the cluster's rounds, counted as its CPU.
    const [postgres, barePostgres, redis] = await Promise.all([
      startPostgres({
        name: 'bench-cluster',
        ...(process.env.BENCH_PG_STATS ? { settings: { shared_preload_libraries: 'pg_stat_statements' } } : {}),
      }),
      startPostgres({ name: 'bench-cluster-bare' }),
      startRedis(),
    ]);
    const children: BenchChild[] = [];
    const fleets: Fleet[] = [];
    let arm: ClusterArm | undefined;
    try {
      const bareUrl = await barePostgres.createDatabase('bare');
      await (await PostgresStore.open({ url: bareUrl })).close(); // the same schema, for the bare inserts
      arm = await startClusterArm({ postgres, redis, database: 'relay' });
      const databaseUrl = arm.databaseUrl;
      const limits = { requestsPerSecond: 1_000_000, requestBurst: 1_000_000 };
      const sqlite = await startChild('relay-server.ts', ['sqlite', join(dir, 'relay.db'), JSON.stringify(limits)]);
      children.push(sqlite);
      const forwarder = await startChild('ws-forwarder.ts');
      children.push(forwarder);

      const cluster = arm.fleet;
      const single = await relayFleet(sqlite.port);
      fleets.push(single);
      const bare = await forwarderFleet(forwarder.port, cluster.senders, cluster.receivers);
      fleets.push(bare);

      await closedLoop(bare.traffic, WARMUP_MS);
      await closedLoop(cluster.traffic, CLUSTER_WARMUP_MS);
      await closedLoop(single.traffic, WARMUP_MS);
      const stored = cluster.sample();
      if (stored === undefined) throw new Error('no message crossed the cluster');
      const recipients = cluster.receivers.map((c) => c.did);
      const senders = cluster.senders.map((c) => c.did);
      await bareInsertRate(bareUrl, recipients, senders, stored, WARMUP_MS);

      // CPU per message of the cluster rounds: what a loaded machine does not distort much.
      const nodePids = arm.nodes.map((n) => n.process.pid!);
      const meters = arm.meters;
      const cpu = [0, 0, 0];
      let messages = 0;
      // The single-node relay's CPU over its own rounds: the cluster's is judged against it.
      const singleCpu = { micros: 0, routed: 0 };
      const signs: number[] = [];
      const c: number[] = [];
      const s: number[] = [];
      const w: number[] = [];
      const q: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        signs.push(ed25519SignRate());
        w.push(await closedLoop(bare.traffic, ROUND_MS));
        q.push(await bareInsertRate(bareUrl, recipients, senders, stored, ROUND_MS));
        const done = cluster.traffic.completed;
        for (const m of meters) m.start();
        c.push(await closedLoop(cluster.traffic, ROUND_MS));
        messages += cluster.traffic.completed - done;
        meters.forEach((m, i) => {
          cpu[i]! += m.stop();
        });
        const before = await sqlite.ask('stats');
        s.push(await closedLoop(single.traffic, ROUND_MS));
        const after = await sqlite.ask('stats');
        singleCpu.micros += after.cpuMicros! - before.cpuMicros!;
        singleCpu.routed += after.routed! - before.routed!;
      }
      const signRate = median(signs);
      const clusterCpu = (cpu[0]! + cpu[1]! + cpu[2]!) * 1e6;
      const cpuPerMessage = clusterCpu / Math.max(1, messages);
      const singleCpuPerMessage = singleCpu.micros / singleCpu.routed;
      const cpuRatio = cpuPerMessage / singleCpuPerMessage;
      const rateRatio = median(c) / median(s);
      // The target's rate: half of what the cluster carried in this run's closed-loop rounds.
      const pacedRate = Math.max(1, Math.round(median(c) / 2));
      // Past its capacity the cluster falls behind and messages fail: reported, not thrown.
      let latency: { samples: number[]; achieved: number } = { samples: [Number.POSITIVE_INFINITY], achieved: 0 };
      let pacedFailure: string | undefined;
      try {
        latency = await paced(cluster.traffic, pacedRate);
      } catch (error) {
        pacedFailure = (error as Error).message;
      }
      const stats = await Promise.all(arm.nodes.map((n) => n.ask('stats')));
      if (process.env.BENCH_PG_STATS) {
        await printStatements(databaseUrl);
        await printRedisCommands(redis.url);
      }

      const forwarded = { name: 'bare ws forwarder, 100 connections', value: median(w), unit: 'msg/s' };
      const inserts = {
        name: 'bare PostgreSQL inserts (unnest, 100 per transaction)',
        value: median(q),
        unit: 'rows/s',
      };
      const lower = inserts.value < forwarded.value ? inserts : forwarded;
      const ratio = median(c) / lower.value;
      const p99 = percentile(latency.samples, 99);
      const figures: Figure[] = [
        forwarded,
        inserts,
        {
          name: 'wmp.message.deliver across nodes (3 nodes, PostgreSQL + Redis), 100 connections, acked',
          value: median(c),
          unit: 'msg/s',
          ratio,
          target: '>= 0.50 of baseline',
          met: ratio >= 0.5,
        },
        {
          name: `cluster rate achieved when paced at ${pacedRate} msg/s (half its capacity)`,
          value: latency.achieved,
          unit: 'msg/s',
        },
        {
          name: `cross-node p50 latency at ${pacedRate} msg/s`,
          value: ms(percentile(latency.samples, 50)),
          unit: 'ms',
        },
        {
          name: `cross-node p99 latency at ${pacedRate} msg/s (half its capacity)`,
          value: ms(p99),
          unit: 'ms',
          target: '<= 25 ms',
          met: p99 <= 25,
        },
        ...(['relay nodes', 'PostgreSQL', 'Redis'] as const).map((who, i) => ({
          name: `CPU per message across nodes: ${who}`,
          value: Math.round((cpu[i]! * 1e6) / Math.max(1, messages)),
          unit: 'µs',
        })),
        {
          name: 'single-node SQLite relay (relay-routing) in the same rounds',
          value: median(s),
          unit: 'msg/s',
          ratio: median(s) / forwarded.value,
        },
        { name: 'single-node relay process CPU per routed message', value: singleCpuPerMessage, unit: 'µs' },
        {
          name: 'cluster CPU per message (nodes + PostgreSQL + Redis) / single node',
          value: cpuRatio,
          unit: 'x',
          target: '<= 2',
          met: cpuRatio <= 2,
        },
        {
          name: 'cluster msg/s / single node (same run)',
          value: rateRatio,
          unit: 'x',
          target: '>= 0.5',
          met: rateRatio >= 0.5,
        },
        ...signRateFigures(signRate),
        cpuInSignsFigure(cpuPerMessage, signRate, {
          name: 'cluster CPU per message (all processes) / Ed25519 sign',
          target: undefined,
        }),
      ];
      return {
        name: 'relay-cluster',
        baseline: lower,
        figures,
        conditions: {
          nodes: 3,
          pairs: PAIRS,
          inFlightPerSender: WINDOW,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          placement: 'senders on node 1, receivers on node 2, node 3 idle',
          store: 'PostgreSQL 15 (fsync on, synchronous_commit on), Redis 7 (no persistence)',
          durability: 'acknowledged (delivered status) only after the PostgreSQL COMMIT (fsynced) of the message',
          relayChain: 'signed when needed (the default): no entry signed here, as on the single node',
          ed25519SignsPerSecond: Math.round(signRate),
          // Which .cpuprofile is whose, when BENCH_RELAY_FLAGS profiles the relays.
          nodePids: nodePids.join(' '),
          singleRelayPid: sqlite.process.pid!,
          routedByNode: stats.map((x) => x.routed).join(' '),
          deliveriesByNode: stats.map((x) => x.deliveries).join(' '),
          errorsByNode: stats.map((x) => x.errors).join(' '),
          clientErrorFrames: cluster.traffic.errors,
          ...(pacedFailure === undefined ? {} : { pacedFailure }),
          roundsCluster: c.map(Math.round).join(' '),
          roundsSqlite: s.map(Math.round).join(' '),
          roundsForwarder: w.map(Math.round).join(' '),
          roundsInserts: q.map(Math.round).join(' '),
        },
      };
    } finally {
      for (const f of fleets) f.close();
      await arm?.close();
      for (const child of children) await child.close();
      await Promise.all([postgres.destroy(), barePostgres.destroy(), redis.destroy()]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
