// Turns a V8 .cpuprofile of the relay (bench/servers/relay-server.ts under BENCH_RELAY_FLAGS,
// see bench/README.md) into a per-message budget: self time summed per stage
// (bench/profile-stages.ts), divided by the messages the relay routed. Prints markdown.
//
//   tsx bench/profile-summary.ts PROFILE.cpuprofile [MORE.cpuprofile ...]
//       [--results bench/results/relay-routing.json | --messages N] [--detail N]
//       [--phase NAME | --windows START-END,...]
//
// Several profiles (one per thread of the process) are summed. --results takes the message count
// (`relayRouted`) and, for comparison, the relay's measured process CPU per message
// (`relayCpuMicrosPerRouted`) from a bench report. The sampled figures are wall time while the
// thread was not idle: they include time blocked in native calls (COMMIT's fsync) and time the
// machine gave to other processes, so they sum to more than the process CPU on a loaded machine;
// they are what bounds a single event loop. --detail N lists the N functions with the most self
// time under each stage, to check the rules. --windows keeps only the samples taken within those
// spans of the monotonic clock (µs, `process.hrtime` of any process on the machine: V8 stamps
// samples with the same clock); --phase NAME takes the spans (`windows_NAME`) and the message count
// (`messages_NAME`) from the --results report (relay-under-attack: `calm`, `attacked`).
import { readFileSync } from 'node:fs';
import { EXCLUDED, type Frame, STAGES, stageOf } from './profile-stages.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: Frame & { readonly lineNumber: number; readonly columnNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly startTime: number;
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface Tally {
  /** Microseconds of self time per stage. */
  readonly stages: Map<string, number>;
  /** Microseconds of self time per stage and function, for --detail. */
  readonly functions: Map<string, Map<string, number>>;
}

function add<K>(map: Map<K, number>, key: K, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

type Window = readonly [number, number];

/** Self time of every sample (within `windows`, when given), assigned to the stage of its stack. */
function tallyProfile(profile: CpuProfile, into: Tally, windows: readonly Window[] | undefined): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfTime = new Map<number, number>();
  // timeDeltas[i] is the time since the sample before: it belongs to sample i.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windows !== undefined && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    add(selfTime, profile.samples[i]!, delta);
  }
  for (const [id, micros] of selfTime) {
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
    const stage = stageOf(stack);
    add(into.stages, stage, micros);
    const leaf = byId.get(id)!.callFrame;
    const name = `${leaf.functionName || '(anonymous)'} ${leaf.url.replace(/^.*\/(packages|node_modules)\//, '')}`;
    const functions = into.functions.get(stage) ?? new Map<string, number>();
    into.functions.set(stage, functions);
    add(functions, name.trim(), micros);
  }
}

interface Options {
  readonly files: string[];
  readonly messages: number;
  readonly cpuMicrosPerMessage: number | undefined;
  readonly detail: number;
  readonly windows: readonly Window[] | undefined;
}

/** `START-END,START-END` (µs of the monotonic clock). */
function parseWindows(text: string): Window[] {
  return text.split(',').map((span) => {
    const [from, to] = span.split('-').map(Number);
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error(`bad window: ${span}`);
    return [from!, to!] as const;
  });
}

function parseArgs(argv: readonly string[]): Options {
  const files: string[] = [];
  let messages: number | undefined;
  let cpu: number | undefined;
  let detail = 0;
  let windows: Window[] | undefined;
  let phase: string | undefined;
  let conditions: Record<string, unknown> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--messages') messages = Number(argv[++i]);
    else if (arg === '--windows') windows = parseWindows(argv[++i]!);
    else if (arg === '--phase') phase = argv[++i];
    else if (arg === '--detail') detail = Number(argv[++i]);
    else if (arg === '--results') {
      const report = JSON.parse(readFileSync(argv[++i]!, 'utf8')) as { conditions?: Record<string, unknown> };
      conditions = report.conditions;
      const perMessage = report.conditions?.relayCpuMicrosPerRouted;
      if (typeof perMessage === 'number') cpu = perMessage;
    } else files.push(arg);
  }
  if (phase !== undefined) {
    const spans = conditions?.[`windows_${phase}`];
    if (typeof spans !== 'string') throw new Error(`the report has no windows_${phase}`);
    windows ??= parseWindows(spans);
    messages ??= Number(conditions?.[`messages_${phase}`]);
    cpu = undefined;
  }
  if (conditions !== undefined) messages ??= Number(conditions.relayRouted);
  if (files.length === 0 || messages === undefined || !(messages > 0) || !Number.isFinite(detail)) {
    throw new Error(
      'usage: profile-summary FILE.cpuprofile... (--results REPORT.json [--phase NAME] | --messages N) [--windows S-E,...] [--detail N]',
    );
  }
  return { files, messages, cpuMicrosPerMessage: cpu, detail, windows };
}

function main(): void {
  const options = parseArgs(process.argv.slice(2));
  const tally: Tally = { stages: new Map(), functions: new Map() };
  for (const file of options.files) {
    tallyProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, tally, options.windows);
  }
  const busy = STAGES.reduce((sum, stage) => sum + (tally.stages.get(stage) ?? 0), 0);
  const perMessage = (micros: number) => micros / options.messages;
  const fixed = (v: number, digits = 1) => v.toFixed(digits);

  const lines: string[] = [];
  lines.push(`Messages routed: ${options.messages}; per-message work sampled: ${fixed(busy / 1000, 0)} ms.`);
  if (options.cpuMicrosPerMessage !== undefined) {
    lines.push(
      `Relay process CPU per message, measured rounds (all threads): ${fixed(options.cpuMicrosPerMessage)} µs.`,
    );
  }
  for (const stage of EXCLUDED) {
    lines.push(`Excluded: ${stage} ${fixed((tally.stages.get(stage) ?? 0) / 1000, 0)} ms.`);
  }
  lines.push('', '| stage | ms sampled | share | µs/message |', '|---|---:|---:|---:|');
  const row = (stage: string, micros: number) =>
    `| ${stage} | ${fixed(micros / 1000, 0)} | ${fixed((100 * micros) / busy)}% | ${fixed(perMessage(micros))} |`;
  for (const stage of STAGES) lines.push(row(stage, tally.stages.get(stage) ?? 0));
  lines.push(row('**total**', busy));
  if (options.detail > 0) {
    for (const stage of [...STAGES, ...EXCLUDED]) {
      const functions = [...(tally.functions.get(stage) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, options.detail);
      if (functions.length === 0) continue;
      lines.push('', `${stage}:`);
      for (const [name, micros] of functions) lines.push(`  ${fixed(micros / 1000).padStart(8)} ms  ${name}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
