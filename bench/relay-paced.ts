// Where the relay's latency at a paced rate comes from: one SQLite relay (bench/servers/
// relay-server.ts) under relay-routing's load, first in a closed loop (its capacity, CPU and
// transactions per message), then paced at each rate named ("half": half the closed-loop rate, as
// relay-routing's p99 target), printing per phase the relay's CPU per message, transactions per
// message and operations per transaction (its group commit), its event loop's delay (p99, max),
// its GC pauses (minor and major, the longest) and the latency send -> receive (p50, p90, p99).
// Not a benchmark of its own (no target, no report file): a tool to read the p99 target's
// misses, see bench/results/issue28-single-relay.md.
//
//   tsx --conditions=@wmp/source bench/relay-paced.ts [--rates half,1000,...] [TREE]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { percentile } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { closedLoop, paced, relayFleet } from './servers/routing-load.js';

/** Per message (and per transaction) between two `stats` answers of the relay. */
function perMessage(before: Record<string, number>, after: Record<string, number>): string {
  const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  const routed = d('routed');
  return (
    `${(d('cpuMicros') / routed).toFixed(1)} µs CPU/message, ${(d('transactions') / routed).toFixed(3)} transactions/message, ` +
    `${(d('operations') / d('transactions')).toFixed(1)} operations/transaction`
  );
}

async function phase(child: BenchChild, run: () => Promise<number[] | number>): Promise<string> {
  await child.ask('loop');
  const before = await child.ask('stats');
  const result = await run();
  const after = await child.ask('stats');
  const loop = await child.ask('loop');
  const samples = Array.isArray(result) ? result : undefined;
  const latency = samples
    ? `; latency p50 ${percentile(samples, 50).toFixed(2)}, p90 ${percentile(samples, 90).toFixed(2)}, p99 ${percentile(samples, 99).toFixed(2)} ms`
    : '';
  const gc =
    `GC ${loop.gcMinor} minor (${loop.gcMinorMs!.toFixed(0)} ms), ${loop.gcMajor} major (${loop.gcMajorMs!.toFixed(0)} ms), ` +
    `longest ${loop.gcMaxMs!.toFixed(1)} ms`;
  return `${perMessage(before, after)}; loop delay p99 ${loop.p99Ms!.toFixed(1)}, max ${loop.maxMs!.toFixed(1)} ms; ${gc}${latency}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--rates');
  const rates = (at === -1 ? 'half,1000' : args.splice(at, 2)[1]!).split(',');
  const root = args[0] === undefined ? undefined : resolve(args[0]);
  const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-paced-'));
  const limits = JSON.stringify({ requestsPerSecond: 1_000_000, requestBurst: 1_000_000 });
  const child = await startChild('relay-server.ts', ['sqlite', join(dir, 'relay.db'), limits], root ? { root } : {});
  const fleet = await relayFleet(child.port);
  try {
    await closedLoop(fleet.traffic, 800);
    let capacity = 0;
    const closed = await phase(child, async () => (capacity = await closedLoop(fleet.traffic, 1500)));
    console.log(`closed loop: ${Math.round(capacity)} msg/s; ${closed}`);
    for (const r of rates) {
      const rate = r === 'half' ? Math.round(capacity / 2) : Number(r);
      let achieved = 0;
      const line = await phase(child, async () => {
        const out = await paced(fleet.traffic, rate);
        achieved = out.achieved;
        return out.samples;
      });
      console.log(`paced at ${rate} msg/s (achieved ${Math.round(achieved)}): ${line}`);
    }
  } finally {
    fleet.close();
    await child.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
