// Shared benchmark helpers. Each benchmark measures its subject and a bare baseline in the same
// run, interleaved, because these machines are noisy: the ratio is the figure that matters.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

export interface Figure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** Subject / baseline, when the figure has a baseline. */
  readonly ratio?: number;
  /** The target as text, e.g. ">= 0.70 of baseline" or "<= 0.5 s". */
  readonly target?: string;
  readonly met?: boolean;
}

export interface BenchReport {
  readonly name: string;
  readonly figures: Figure[];
  readonly baseline?: { readonly name: string; readonly value: number; readonly unit: string };
  /** How the figures were measured (sizes, counts, modes), written to the JSON only. */
  readonly conditions?: Readonly<Record<string, string | number | boolean>>;
  /** Why nothing was measured (a program the bench needs is missing): printed as one line. */
  readonly skipped?: string;
}

export interface Benchmark {
  readonly name: string;
  run(): Promise<BenchReport>;
}

/** Operations per second of `op` over about `ms` milliseconds (after a short warm-up). */
export async function rate(op: () => unknown, ms = 400): Promise<number> {
  const warm = performance.now() + Math.min(100, ms / 4);
  while (performance.now() < warm) await op();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 16; i++) await op();
    n += 16;
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

/** Measures subject and baseline alternately `rounds` times and keeps the median of each. */
export async function compareRates(
  subject: () => unknown,
  baseline: () => unknown,
  rounds = 5,
  ms = 400,
): Promise<{ subject: number; baseline: number; ratio: number }> {
  const s: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    b.push(await rate(baseline, ms));
    s.push(await rate(subject, ms));
  }
  const subjectRate = median(s);
  const baselineRate = median(b);
  return { subject: subjectRate, baseline: baselineRate, ratio: subjectRate / baselineRate };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function machine() {
  const cpu = cpus();
  return {
    node: process.version,
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

export function writeReport(report: BenchReport): void {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const body = { ...report, machine: machine(), at: new Date().toISOString() };
  writeFileSync(new URL(`${report.name}.json`, dir), `${JSON.stringify(body, null, 2)}\n`);
}

export function formatFigure(bench: string, f: Figure): string {
  const value = f.value >= 100 ? Math.round(f.value).toLocaleString('en-US') : f.value.toFixed(3);
  const ratio = f.ratio === undefined ? '' : `  ratio ${f.ratio.toFixed(2)}`;
  const target = f.target === undefined ? '' : `  target ${f.target} ${f.met ? 'MET' : 'MISSED'}`;
  return `${bench}: ${f.name} = ${value} ${f.unit}${ratio}${target}`;
}
