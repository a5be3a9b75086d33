// `relay-routing`'s authenticated load (50 sender -> receiver pairs over WebSocket, SQLite store,
// acked, bench/servers/routing-load.ts), in rounds that alternate between unattacked and attacked:
// one hostile client (bench/servers/hostile-load.ts, its own process, one source address) holds
// 200 connections that never log in and 20 readers that stopped reading all along, and during
// the attacked rounds floods the relay: unauthenticated creates on those connections, unsigned
// HTTP creates, ~1 MiB deliveries to 256 made-up recipients, 64 KiB messages to the slow readers.
// Same run, same relay process, same clients (docs/architecture.md, "Performance"):
// - throughput attacked >= 70% of unattacked (medians of the closed-loop rounds);
// - the relay's peak RSS (VmHWM of its process) under its configured budget: its RSS once the
//   hostile client is connected, plus the memory budgets strangers can make it hold (outbound
//   buffers, SSE replay, bodies in flight), as configured here.
// Per-source limits are on (`limitLoopback`): the load's 100 clients each connect from their own
// loopback address, as users on other hosts do, the hostile client from one. A round after the
// hostile client left is printed too (recovery), without a target.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Benchmark, type BenchReport, median } from './lib.js';
import { type BenchChild, startChild } from './servers/child.js';
import { procCpu, procStatus } from './servers/process-stats.js';
import { closedLoop, type Fleet, PAIRS, relayFleet, WINDOW } from './servers/routing-load.js';

const ROUND_MS = 1500;
const ROUNDS = 4;
const WARMUP_MS = 600;
const TARGET = 0.7;
const MiB = 1024 * 1024;
/** The relay's memory budgets for this run (the defaults are sized for a larger node). */
const BUDGETS = { outboundBufferBytes: 64 * MiB, replayBufferChars: 32 * MiB, bodyBytesInFlight: 32 * MiB };
/**
 * What the hostile client does, all at once (bench/servers/hostile-load.ts). BENCH_ATTACK (JSON)
 * overrides parts of it, to see what each part costs (e.g. `{"fanoutEveryMs":1e9}` turns fan-outs off).
 */
const PLAN = {
  idle: 200,
  createEveryMs: 250,
  httpCreateEveryMs: 20,
  fanoutEveryMs: 50,
  slowReaders: 20,
  slowSenders: 4,
  ...(JSON.parse(process.env.BENCH_ATTACK ?? '{}') as Record<string, number>),
};

const mib = (bytes: number) => Math.round(bytes / MiB);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const round2 = (v: number) => Math.round(v * 100) / 100;

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

      // The hostile client connects (idle connections, slow readers, its logged-in clients), then
      // floods only during the attacked rounds, which alternate with unattacked ones
      // (docs/architecture.md, "Performance": these machines are noisy, interleaved rounds keep the
      // ratio honest).
      attacker = await startChild('hostile-load.ts', [String(relay.port), JSON.stringify(PLAN)]);
      await closedLoop(subject.traffic, WARMUP_MS);
      const rssCalm = procStatus(pid, 'VmRSS');
      const budget = rssCalm + BUDGETS.outboundBufferBytes + BUDGETS.replayBufferChars + BUDGETS.bodyBytesInFlight;
      const calm: number[] = [];
      const attacked: number[] = [];
      let rssPeakSampled = 0;
      const sampler = setInterval(() => {
        rssPeakSampled = Math.max(rssPeakSampled, procStatus(pid, 'VmRSS'));
      }, 50);
      // CPU seconds of the relay, the hostile client and this process (the load) in each kind of round.
      const cpu = { calm: [0, 0, 0], attacked: [0, 0, 0] };
      // The relay's event-loop delay in each kind of round (p99 and max, ms): a stall shows here.
      const loop = { calm: [0, 0], attacked: [0, 0] };
      // SQLite transactions (each one a synchronous commit with fsync) and operations, per kind of round.
      const writes = { calm: [0, 0], attacked: [0, 0] };
      const attackerPid = attacker.process.pid!;
      // Each round's span of the monotonic clock (µs), for profile-summary --phase calm|attacked.
      const windows = { calm: [] as string[], attacked: [] as string[] };
      const completed = { calm: 0, attacked: 0 };
      const micros = () => Number(process.hrtime.bigint() / 1000n);
      const measured = async (into: number[], delays: number[], written: number[], spans: string[]) => {
        await relay!.ask('loop');
        const statsBefore = await relay!.ask('stats');
        const before = [procCpu(pid), procCpu(attackerPid), process.cpuUsage()];
        const from = micros();
        const done = subject.traffic.completed;
        const rate = await closedLoop(subject.traffic, ROUND_MS);
        spans.push(`${from}-${micros()}`);
        completed[spans === windows.calm ? 'calm' : 'attacked'] += subject.traffic.completed - done;
        const load = process.cpuUsage(before[2] as NodeJS.CpuUsage);
        into[0]! += procCpu(pid) - (before[0] as number);
        into[1]! += procCpu(attackerPid) - (before[1] as number);
        into[2]! += (load.user + load.system) / 1e6;
        const statsAfter = await relay!.ask('stats');
        written[0]! += statsAfter.transactions! - statsBefore.transactions!;
        written[1]! += statsAfter.operations! - statsBefore.operations!;
        const delay = await relay!.ask('loop');
        delays[0] = Math.max(delays[0]!, delay.p99Ms!);
        delays[1] = Math.max(delays[1]!, delay.maxMs!);
        return rate;
      };
      for (let round = 0; round < ROUNDS; round++) {
        calm.push(await measured(cpu.calm, loop.calm, writes.calm, windows.calm));
        await attacker.ask('attack');
        attacked.push(await measured(cpu.attacked, loop.attacked, writes.attacked, windows.attacked));
        await attacker.ask('pause');
      }
      clearInterval(sampler);
      const attack = await attacker.ask('stats');
      const relayStats = await relay.ask('stats');
      await attacker.close();
      attacker = undefined;
      const after = await closedLoop(subject.traffic, ROUND_MS);
      const peak = procStatus(pid, 'VmHWM');

      // The relay's CPU per message of the load, in each kind of round: what the attacker adds.
      const perMessage = (seconds: number, rates: number[]) => (seconds * 1e6) / ((sum(rates) * ROUND_MS) / 1000);
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
          {
            name: 'relay CPU per message of the load, unattacked rounds',
            value: perMessage(cpu.calm[0]!, calm),
            unit: 'µs',
          },
          {
            name: 'relay CPU per message of the load, attacked rounds (the attack included)',
            value: perMessage(cpu.attacked[0]!, attacked),
            unit: 'µs',
          },
          { name: 'relay RSS, hostile client connected, before its floods', value: mib(rssCalm), unit: 'MiB' },
          {
            name: 'relay peak RSS (VmHWM), whole run',
            value: mib(peak),
            unit: 'MiB',
            ratio: peak / budget,
            target: `<= ${mib(budget)} MiB (before the floods + outbound, replay and body budgets)`,
            met: peak <= budget,
          },
        ],
        conditions: {
          pairs: PAIRS,
          inFlightPerSender: WINDOW,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          store: 'SQLite file, WAL, fsync after each commit off the loop, group commit',
          sources: 'per-source limits on (limitLoopback); each load client its own loopback address, the attacker one',
          ...Object.fromEntries(Object.entries(PLAN).map(([k, v]) => [`attack.${k}`, v])),
          ...Object.fromEntries(Object.entries(BUDGETS).map(([k, v]) => [`budget.${k}MiB`, v / MiB])),
          rssPeakSampledDuringAttackMiB: mib(rssPeakSampled),
          // Cores used on average (CPU seconds / wall seconds) in each kind of round, and the
          // relay's CPU per message the load got through.
          relayCoresUnattacked: round2(cpu.calm[0]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayCoresAttacked: round2(cpu.attacked[0]! / ((ROUNDS * ROUND_MS) / 1000)),
          attackerCoresAttacked: round2(cpu.attacked[1]! / ((ROUNDS * ROUND_MS) / 1000)),
          loadCoresUnattacked: round2(cpu.calm[2]! / ((ROUNDS * ROUND_MS) / 1000)),
          loadCoresAttacked: round2(cpu.attacked[2]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayLoopDelayP99MsUnattacked: round2(loop.calm[0]!),
          relayLoopDelayMaxMsUnattacked: round2(loop.calm[1]!),
          relayLoopDelayP99MsAttacked: round2(loop.attacked[0]!),
          relayLoopDelayMaxMsAttacked: round2(loop.attacked[1]!),
          relayTransactionsPerSecondUnattacked: Math.round(writes.calm[0]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayTransactionsPerSecondAttacked: Math.round(writes.attacked[0]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayWritesPerSecondUnattacked: Math.round(writes.calm[1]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayWritesPerSecondAttacked: Math.round(writes.attacked[1]! / ((ROUNDS * ROUND_MS) / 1000)),
          relayCpuMicrosPerMessageUnattacked: Math.round(perMessage(cpu.calm[0]!, calm)),
          relayCpuMicrosPerMessageAttacked: Math.round(perMessage(cpu.attacked[0]!, attacked)),
          // Which .cpuprofile is the relay's, when BENCH_RELAY_FLAGS profiles it.
          relayPid: pid,
          windows_calm: windows.calm.join(','),
          windows_attacked: windows.attacked.join(','),
          // Messages of the load completed within those spans (the closed loop's drain included).
          messages_calm: completed.calm,
          messages_attacked: completed.attacked,
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
