// A/B of relay builds under relay-routing's load: the relay of this checkout and the relay of
// each other checkout named (a worktree with a candidate cut applied, its node_modules linked),
// in interleaved closed-loop rounds of one run, on the same client code (bench/servers/
// routing-load.ts). Prints each relay's rate and process CPU per routed message (all threads,
// measured rounds), medians and sums over the rounds, and the difference to this checkout's:
// what a cut buys, measured beside what it is measured against. Not a benchmark of its own
// (no target, no report file): a tool for the cuts, see bench/README.md.
//
//   tsx --conditions=@wmp/source bench/relay-ab.ts [--store sqlite|memory] [--rounds N] TREE...
//   tsx --conditions=@wmp/source bench/relay-ab.ts --cluster [--rounds N] TREE...
//   tsx --conditions=@wmp/source bench/relay-ab.ts --federation [--rounds N] TREE...
//
// With --cluster, each checkout runs as a three-node cluster on PostgreSQL + Redis under
// relay-cluster's load instead (bench/servers/cluster-ab.ts); with --federation, as a pair of
// federated relays under relay-federation's load (bench/servers/federation-ab.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ed25519SignRate } from './ed25519-rate.js';
import { median } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { clusterAb } from './servers/cluster-ab.js';
import { federationAb } from './servers/federation-ab.js';
import { closedLoop, type Fleet, relayFleet } from './servers/routing-load.js';

const ROUND_MS = 1500;
const WARMUP_MS = 800;

interface Arm {
  readonly name: string;
  readonly child: BenchChild;
  readonly fleet: Fleet;
  readonly rates: number[];
  readonly cpu: { micros: number; routed: number };
}

function parseArgs(argv: readonly string[]) {
  let store: 'sqlite' | 'memory' = 'sqlite';
  let rounds = 6;
  let cluster = false;
  let federation = false;
  const trees: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--store') store = argv[++i] === 'memory' ? 'memory' : 'sqlite';
    else if (arg === '--rounds') rounds = Number(argv[++i]);
    else if (arg === '--cluster') cluster = true;
    else if (arg === '--federation') federation = true;
    else trees.push(resolve(arg));
  }
  if (trees.length === 0 || !(rounds > 0)) {
    throw new Error('usage: relay-ab [--store sqlite|memory | --cluster | --federation] [--rounds N] TREE...');
  }
  return { store, rounds, trees, cluster, federation };
}

async function main(): Promise<void> {
  const { store, rounds, trees, cluster, federation } = parseArgs(process.argv.slice(2));
  if (cluster) return clusterAb(trees, rounds);
  if (federation) return federationAb(trees, rounds);
  const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-ab-'));
  const limits = JSON.stringify({ requestsPerSecond: 1_000_000, requestBurst: 1_000_000 });
  const arms: Arm[] = [];
  try {
    for (const [i, root] of [undefined, ...trees].entries()) {
      const args = store === 'sqlite' ? ['sqlite', join(dir, `relay-${i}.db`), limits] : ['memory', '-', limits];
      const child = await startChild('relay-server.ts', args, root === undefined ? {} : { root });
      const fleet = await relayFleet(child.port);
      arms.push({ name: root ?? 'this checkout', child, fleet, rates: [], cpu: { micros: 0, routed: 0 } });
    }
    for (const arm of arms) await closedLoop(arm.fleet.traffic, WARMUP_MS);
    const signs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      signs.push(ed25519SignRate());
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        const before = await arm.child.ask('stats');
        arm.rates.push(await closedLoop(arm.fleet.traffic, ROUND_MS));
        const after = await arm.child.ask('stats');
        arm.cpu.micros += after.cpuMicros! - before.cpuMicros!;
        arm.cpu.routed += after.routed! - before.routed!;
      }
    }
    const sign = 1e6 / median(signs);
    const base = arms[0]!;
    const perMessage = (arm: Arm) => arm.cpu.micros / arm.cpu.routed;
    console.log(`store ${store}, ${rounds} rounds of ${ROUND_MS} ms; Ed25519 sign ${sign.toFixed(1)} µs CPU`);
    for (const arm of arms) {
      const stats = await arm.child.ask('stats');
      const cpu = perMessage(arm);
      const delta = cpu - perMessage(base);
      console.log(
        `${arm.name}: ${Math.round(median(arm.rates))} msg/s (rounds ${arm.rates.map(Math.round).join(' ')}), ` +
          `${cpu.toFixed(1)} µs CPU per message (${(cpu / sign).toFixed(2)} signs)` +
          (arm === base ? '' : `, ${delta >= 0 ? '+' : ''}${delta.toFixed(1)} µs against this checkout`) +
          // For BENCH_RELAY_FLAGS profiles: whose file is whose, and what to divide by.
          `; pid ${arm.child.process.pid}, ${stats.routed} routed in all`,
      );
    }
  } finally {
    for (const arm of arms) arm.fleet.close();
    for (const arm of arms) await arm.child.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
