// Prints the plain "N passed, N failed" closing line from vitest's JSON report.
import { readFileSync } from 'node:fs';

try {
  const report = JSON.parse(readFileSync(new URL('../.ci/out/vitest.json', import.meta.url), 'utf8'));
  const skipped = report.numPendingTests + report.numTodoTests;
  console.log(
    `vitest: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`,
  );
} catch {
  console.log('vitest: no report written');
  process.exitCode = 1;
}
