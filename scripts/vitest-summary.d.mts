/** Vitest's JSON report, the fields the summary reads. */
export interface VitestJsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests?: number;
  numTodoTests?: number;
  success?: boolean;
  testResults?: { status: string; message: string; assertionResults: { status: string }[] }[];
}
/** The run file written by scripts/vitest-run-reporter.mjs. */
export interface VitestRunFile {
  reason: 'passed' | 'failed' | 'interrupted';
  unhandledErrors: number;
  failedSuites: { file: string; project: string; error: string }[];
}
/** The closing line of `npm test`. */
export function summarize(input: {
  report: VitestJsonReport | undefined;
  run: VitestRunFile | undefined;
  exitCode: number | undefined;
}): string;
export function failedSuiteLines(run: VitestRunFile | undefined): string[];
