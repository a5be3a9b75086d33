// npm run bench [name ...]: runs the benchmarks in bench/*.bench.ts (all, or those named), writes
// bench/results/<name>.json and prints one line per figure. Never part of `npm test`. What each
// baseline is, the environment knobs and how to profile the relay: bench/README.md.
import { readdirSync } from 'node:fs';
import { type Benchmark, formatFigure, writeReport } from './lib.js';

const wanted = process.argv.slice(2);
const files = readdirSync(new URL('./', import.meta.url))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();

let missed = 0;
// A file exports one benchmark, or several that share their code (relay-routing and -memory).
const benches: Benchmark[] = [];
for (const file of files) benches.push(...[(await import(`./${file}`)).default as Benchmark | Benchmark[]].flat());

for (const bench of benches) {
  if (wanted.length > 0 && !wanted.includes(bench.name)) continue;
  const report = await bench.run();
  writeReport(report);
  if (report.skipped) {
    console.log(`${report.name}: skipped: ${report.skipped}`);
    continue;
  }
  if (report.baseline) {
    console.log(
      `${report.name}: baseline ${report.baseline.name} = ${Math.round(report.baseline.value).toLocaleString('en-US')} ${report.baseline.unit}`,
    );
  }
  for (const f of report.figures) {
    console.log(formatFigure(report.name, f));
    if (f.met === false) missed++;
  }
}
if (missed > 0) console.log(`bench: ${missed} target(s) missed`);
