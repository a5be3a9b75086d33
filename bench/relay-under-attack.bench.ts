// `relay-routing`'s authenticated load (50 sender -> receiver pairs over WebSocket, SQLite store,
// acked, bench/servers/routing-load.ts) measured unattacked, then again while one hostile client
// (bench/servers/hostile-load.ts, its own process) floods the relay: unauthenticated connections
// that create sessions they never authenticate, unsigned HTTP creates, ~1 MiB deliveries to 256
// made-up recipients, and readers that stop reading while others send them 64 KiB messages.
// Both in the same run, same relay process, same clients (DESIGN §8):
// - throughput attacked >= 70% of unattacked (the medians of the closed-loop rounds);
// - the relay's peak RSS (VmHWM of its process) under its configured budget: its RSS unattacked
//   plus the memory budgets strangers can make it hold (outbound buffers, SSE replay, bodies in
//   flight), as configured here.
// A round after the attack is printed too (recovery), without a target.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Benchmark, type BenchReport, median } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { closedLoop, type Fleet, PAIRS, relayFleet, WINDOW } from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 600;
const TARGET = 0.7;
const MiB = 1024 * 1024;
/** The relay's memory budgets for this run (the defaults are sized for a larger node). */
const BUDGETS = { outboundBufferBytes: 64 * MiB, replayBufferChars: 32 * MiB, bodyBytesInFlight: 32 * MiB };
/** What the hostile client does, all at once (bench/servers/hostile-load.ts). */
const PLAN = {
  idle: 200,
  createEveryMs: 250,
  httpCreateEveryMs: 20,
  fanoutEveryMs: 50,
  slowReaders: 20,
  slowSenders: 4,
};

/** A value of /proc/<pid>/status in bytes (VmRSS, VmHWM: Linux). */
function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) * 1024;
}

const mib = (bytes: number) => Math.round(bytes / MiB);

const bench: Benchmark = {
  name: 'relay-under-attack',
  async run(): Promise<BenchReport> {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-relay-under-attack-'));
    // As relay-routing: the per-identity request rate out of the load's way (it still runs).
    const limits = { requestsPerSecond: 1_000_000, requestBurst: 1_000_000, ...BUDGETS };
    let relay: BenchChild | undefined;
    let attacker: BenchChild | undefined;
    let fleet: Fleet | undefined;
    try {
      // Per-source limits on, as for clients on other hosts: the load's 100 clients each come from
      // their own loopback address, the hostile client from one (127.0.0.2).
      relay = await startChild('relay-server.ts', [
        'sqlite',
        join(dir, 'relay.db'),
        JSON.stringify(limits),
        JSON.stringify({ limitLoopback: true }),
      ]);
      const pid = relay.process.pid!;
      const subject = await relayFleet(relay.port, { ownSources: true });
      fleet = subject;
      await closedLoop(subject.traffic, WARMUP_MS);

      const calm: number[] = [];
      for (let round = 0; round < ROUNDS; round++) calm.push(await closedLoop(subject.traffic, ROUND_MS));
      const rssCalm = procStatus(pid, 'VmRSS');
      const budget = rssCalm + BUDGETS.outboundBufferBytes + BUDGETS.replayBufferChars + BUDGETS.bodyBytesInFlight;

      attacker = await startChild('hostile-load.ts', [String(relay.port), JSON.stringify(PLAN)]);
      const attacked: number[] = [];
      let rssPeakSampled = 0;
      const sampler = setInterval(() => {
        rssPeakSampled = Math.max(rssPeakSampled, procStatus(pid, 'VmRSS'));
      }, 50);
      for (let round = 0; round < ROUNDS; round++) attacked.push(await closedLoop(subject.traffic, ROUND_MS));
      clearInterval(sampler);
      const attack = await attacker.ask('stats');
      const relayStats = await relay.ask('stats');
      await attacker.close();
      attacker = undefined;
      const after = await closedLoop(subject.traffic, ROUND_MS);
      const peak = procStatus(pid, 'VmHWM');

      const unattacked = median(calm);
      const underAttack = median(attacked);
      const ratio = underAttack / unattacked;
      const baseline = {
        name: `relay unattacked, ${PAIRS * 2} connections, SQLite, acked`,
        value: unattacked,
        unit: 'msg/s',
      };
      return {
        name: 'relay-under-attack',
        baseline,
        figures: [
          baseline,
          {
            name: 'relay under attack (idle + creating connections, HTTP creates, 1 MiB fan-outs to 256, slow readers)',
            value: underAttack,
            unit: 'msg/s',
            ratio,
            target: `>= ${TARGET.toFixed(2)} of unattacked`,
            met: ratio >= TARGET,
          },
          { name: 'relay after the attack (one round)', value: after, unit: 'msg/s', ratio: after / unattacked },
          { name: 'relay RSS unattacked', value: mib(rssCalm), unit: 'MiB' },
          {
            name: 'relay peak RSS (VmHWM), whole run',
            value: mib(peak),
            unit: 'MiB',
            ratio: peak / budget,
            target: `<= ${mib(budget)} MiB (unattacked + outbound, replay and body budgets)`,
            met: peak <= budget,
          },
        ],
        conditions: {
          pairs: PAIRS,
          inFlightPerSender: WINDOW,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          store: 'SQLite file, WAL, synchronous=FULL, group commit',
          sources: 'per-source limits on (limitLoopback); each load client its own loopback address, the attacker one',
          ...Object.fromEntries(Object.entries(PLAN).map(([k, v]) => [`attack.${k}`, v])),
          ...Object.fromEntries(Object.entries(BUDGETS).map(([k, v]) => [`budget.${k}MiB`, v / MiB])),
          rssPeakSampledDuringAttackMiB: mib(rssPeakSampled),
          ...Object.fromEntries(
            Object.entries(attack)
              .filter(([k]) => k !== 'id')
              .map(([k, v]) => [`attacker.${k}`, v]),
          ),
          relayRouted: relayStats.routed!,
          relayErrors: relayStats.errors!,
          clientErrorFrames: subject.traffic.errors,
          roundsUnattacked: calm.map(Math.round).join(' '),
          roundsAttacked: attacked.map(Math.round).join(' '),
        },
      };
    } finally {
      fleet?.close();
      await attacker?.close();
      await relay?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
