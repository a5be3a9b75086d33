// `bench/relay-ab.ts --cluster`: A/B of cluster builds under relay-cluster's load. Each checkout
// (this one first) gets a three-node cluster (bench/servers/cluster-arm.ts) on its own database
// of one PostgreSQL server and on a Redis of its own; this checkout's single-node SQLite relay
// runs in the same rounds as the reference. Rounds are interleaved; each arm's CPU per message is
// that of its nodes, the PostgreSQL server and its Redis over its own rounds (the other arms are
// idle then), and its rate is judged against the single node's of the same run, as the
// relay-cluster targets are (CPU <= 2x, rate >= 0.5x).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RedisServer, startPostgres, startRedis } from '../../test-support/services/index.js';
import { ed25519SignRate } from '../ed25519-rate.js';
import { median } from '../lib.js';
import { startChild } from './child.js';
import { type ClusterArm, startClusterArm } from './cluster-arm.js';
import { closedLoop, relayFleet } from './routing-load.js';

const ROUND_MS = 1500;
const WARMUP_MS = 800;
/** As relay-cluster's: three nodes take longer to a steady state than one. */
const CLUSTER_WARMUP_MS = 3000;

interface Arm {
  readonly name: string;
  readonly cluster: ClusterArm;
  readonly rates: number[];
  /** CPU seconds of the nodes, PostgreSQL and Redis over this arm's rounds. */
  readonly cpu: [number, number, number];
  messages: number;
  /** µs of CPU (every part) per message of each round: their median is what an odd round moves least. */
  readonly perRound: number[];
}

export async function clusterAb(trees: readonly string[], rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-cluster-ab-'));
  const postgres = await startPostgres({ name: 'bench-cluster-ab' });
  const redises: RedisServer[] = [];
  const arms: Arm[] = [];
  const limits = JSON.stringify({ requestsPerSecond: 1_000_000, requestBurst: 1_000_000 });
  const single = await startChild('relay-server.ts', ['sqlite', join(dir, 'single.db'), limits]);
  const singleFleet = await relayFleet(single.port);
  try {
    for (const [i, root] of [undefined, ...trees].entries()) {
      const redis = await startRedis();
      redises.push(redis);
      const cluster = await startClusterArm({
        postgres,
        redis,
        database: `arm${i}`,
        ...(root === undefined ? {} : { root }),
      });
      arms.push({ name: root ?? 'this checkout', cluster, rates: [], cpu: [0, 0, 0], messages: 0, perRound: [] });
    }
    for (const arm of arms) await closedLoop(arm.cluster.fleet.traffic, CLUSTER_WARMUP_MS);
    await closedLoop(singleFleet.traffic, WARMUP_MS);
    const signs: number[] = [];
    const singleRates: number[] = [];
    const singleCpu = { micros: 0, routed: 0 };
    for (let round = 0; round < rounds; round++) {
      signs.push(ed25519SignRate());
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        const traffic = arm.cluster.fleet.traffic;
        const done = traffic.completed;
        for (const m of arm.cluster.meters) m.start();
        arm.rates.push(await closedLoop(traffic, ROUND_MS));
        const messages = traffic.completed - done;
        arm.messages += messages;
        let seconds = 0;
        arm.cluster.meters.forEach((m, i) => {
          const used = m.stop();
          arm.cpu[i]! += used;
          seconds += used;
        });
        arm.perRound.push((seconds * 1e6) / Math.max(1, messages));
      }
      const before = await single.ask('stats');
      singleRates.push(await closedLoop(singleFleet.traffic, ROUND_MS));
      const after = await single.ask('stats');
      singleCpu.micros += after.cpuMicros! - before.cpuMicros!;
      singleCpu.routed += after.routed! - before.routed!;
    }
    const sign = 1e6 / median(signs);
    const singlePerMessage = singleCpu.micros / singleCpu.routed;
    const singleRate = median(singleRates);
    console.log(
      `cluster A/B, ${rounds} rounds of ${ROUND_MS} ms; Ed25519 sign ${sign.toFixed(1)} µs CPU; ` +
        `single node (SQLite, this checkout) ${Math.round(singleRate)} msg/s, ${singlePerMessage.toFixed(1)} µs CPU per message`,
    );
    const perMessage = (arm: Arm) => arm.cpu.map((s) => (s * 1e6) / Math.max(1, arm.messages));
    const total = (arm: Arm) => perMessage(arm).reduce((a, b) => a + b, 0);
    for (const arm of arms) {
      const [nodes, pg, redis] = perMessage(arm);
      const cpu = total(arm);
      const delta = cpu - total(arms[0]!);
      const rate = median(arm.rates);
      console.log(
        `${arm.name}: ${Math.round(rate)} msg/s (rounds ${arm.rates.map(Math.round).join(' ')}; ` +
          `${(rate / singleRate).toFixed(2)}x the single node), ${cpu.toFixed(0)} µs CPU per message ` +
          `(nodes ${nodes!.toFixed(0)}, PostgreSQL ${pg!.toFixed(0)}, Redis ${redis!.toFixed(0)}; ` +
          `${(cpu / singlePerMessage).toFixed(2)}x the single node; median of the rounds ${median(arm.perRound).toFixed(0)})` +
          (arm === arms[0] ? '' : `, ${delta >= 0 ? '+' : ''}${delta.toFixed(0)} µs against this checkout`) +
          `; errors ${arm.cluster.fleet.traffic.errors}`,
      );
    }
  } finally {
    singleFleet.close();
    for (const arm of arms) await arm.cluster.close();
    await single.close();
    await Promise.all([postgres.destroy(), ...redises.map((r) => r.destroy())]);
    rmSync(dir, { recursive: true, force: true });
  }
}
