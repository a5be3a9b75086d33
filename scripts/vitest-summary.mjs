// Prints the closing line of `npm test` from Vitest's JSON report and the run file of
// scripts/vitest-run-reporter.mjs:
//   vitest: 1204 passed, 0 failed, 9 skipped, 0 failed suites, 0 errors
// "failed suites" are test files that failed on their own (import, beforeAll, afterAll), whose
// tests Vitest reports as skipped; "errors" are unhandled errors. When Vitest exited non-zero the
// line ends in "FAILED (vitest exit N)", so it never reads as green then.
//   node scripts/vitest-summary.mjs [vitest exit code] [report.json]
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runReportPath } from './vitest-run-reporter.mjs';

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * The closing line. `report`: Vitest's JSON report (undefined if none was written); `run`: the
 * run file (undefined if none); `exitCode`: Vitest's exit code (undefined if unknown).
 */
export function summarize({ report, run, exitCode }) {
  const failedRun = exitCode !== undefined && exitCode !== 0;
  const verdict = failedRun ? ` - FAILED (vitest exit ${exitCode})` : '';
  if (!report) return `vitest: no report written - FAILED${exitCode === undefined ? '' : ` (vitest exit ${exitCode})`}`;
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // Without the run file, a failed file with no failed test is the best sign of a failed suite.
  const failedSuites = run
    ? run.failedSuites.length
    : (report.testResults ?? []).filter(
        (f) => f.status === 'failed' && (f.message || !f.assertionResults.some((a) => a.status === 'failed')),
      ).length;
  const errors = run ? String(run.unhandledErrors) : '?';
  const counts = [
    `${report.numPassedTests} passed`,
    `${report.numFailedTests} failed`,
    `${skipped} skipped`,
    plural(failedSuites, 'failed suite', 'failed suites'),
    errors === '1' ? '1 error' : `${errors} errors`,
  ].join(', ');
  const anythingFailed = report.numFailedTests > 0 || failedSuites > 0 || errors !== '0' || report.success === false;
  return `vitest: ${counts}${verdict || (anythingFailed ? ' - FAILED' : '')}`;
}

/** The failed suites, one line each, for the end of the log. */
export function failedSuiteLines(run) {
  return (run?.failedSuites ?? []).map(
    (s) => `vitest: failed suite ${s.project ? `|${s.project}| ` : ''}${s.file}: ${s.error}`,
  );
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [code, file] = process.argv.slice(2);
  const reportFile = resolve(file ?? fileURLToPath(new URL('../.ci/out/vitest.json', import.meta.url)));
  const report = readJson(reportFile);
  const run = readJson(runReportPath(reportFile));
  const exitCode = code === undefined || code === '' ? undefined : Number(code);
  for (const line of failedSuiteLines(run)) console.log(line);
  const line = summarize({ report, run, exitCode });
  console.log(line);
  if (line.includes('FAILED')) process.exitCode = 1;
}
