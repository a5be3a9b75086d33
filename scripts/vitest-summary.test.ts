import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir } from '../test-support/services/common.js';
import { runReportPath } from './vitest-run-reporter.mjs';
import { failedSuiteLines, summarize, type VitestJsonReport, type VitestRunFile } from './vitest-summary.mjs';

const report = (over: Partial<VitestJsonReport> = {}): VitestJsonReport => ({
  numPassedTests: 1204,
  numFailedTests: 0,
  numPendingTests: 9,
  numTodoTests: 0,
  success: true,
  testResults: [],
  ...over,
});
const run = (over: Partial<VitestRunFile> = {}): VitestRunFile => ({
  reason: 'passed',
  unhandledErrors: 0,
  failedSuites: [],
  ...over,
});

describe('summarize', () => {
  it('a green run', () => {
    expect(summarize({ report: report(), run: run(), exitCode: 0 })).toBe(
      'vitest: 1204 passed, 0 failed, 9 skipped, 0 failed suites, 0 errors',
    );
  });

  it('counts a file that failed in beforeAll (its tests are "skipped") as a failed suite', () => {
    const failedSuites = [{ file: 'test/db.test.ts', project: 'packages/relay-server', error: 'no database' }];
    expect(summarize({ report: report({ success: false }), run: run({ failedSuites }), exitCode: 1 })).toBe(
      'vitest: 1204 passed, 0 failed, 9 skipped, 1 failed suite, 0 errors - FAILED (vitest exit 1)',
    );
    expect(failedSuiteLines(run({ failedSuites }))).toEqual([
      'vitest: failed suite |packages/relay-server| test/db.test.ts: no database',
    ]);
  });

  it('counts unhandled errors', () => {
    expect(summarize({ report: report({ success: true }), run: run({ unhandledErrors: 2 }), exitCode: 1 })).toBe(
      'vitest: 1204 passed, 0 failed, 9 skipped, 0 failed suites, 2 errors - FAILED (vitest exit 1)',
    );
  });

  it('never reads as green when vitest exited non-zero, whatever the counts say', () => {
    for (const exitCode of [1, 2, 130]) {
      const line = summarize({ report: report(), run: run(), exitCode });
      expect(line).toMatch(new RegExp(`- FAILED \\(vitest exit ${exitCode}\\)$`));
    }
  });

  it('says FAILED when counts show a failure even without an exit code', () => {
    expect(summarize({ report: report({ numFailedTests: 3 }), run: run(), exitCode: undefined })).toBe(
      'vitest: 1204 passed, 3 failed, 9 skipped, 0 failed suites, 0 errors - FAILED',
    );
  });

  it('without the run file: failed suites from the JSON report, errors unknown', () => {
    const testResults = [
      { status: 'failed', message: '', assertionResults: [{ status: 'skipped' }] }, // beforeAll in a describe
      { status: 'failed', message: 'Cannot find module', assertionResults: [] }, // import failed
      { status: 'failed', message: '', assertionResults: [{ status: 'failed' }] }, // a failing test only
      { status: 'passed', message: '', assertionResults: [{ status: 'passed' }] },
    ];
    expect(summarize({ report: report({ testResults }), run: undefined, exitCode: 1 })).toBe(
      'vitest: 1204 passed, 0 failed, 9 skipped, 2 failed suites, ? errors - FAILED (vitest exit 1)',
    );
  });

  it('no report at all', () => {
    expect(summarize({ report: undefined, run: undefined, exitCode: 1 })).toBe(
      'vitest: no report written - FAILED (vitest exit 1)',
    );
  });
});

describe('on a real vitest run', () => {
  const work = mkdtempSync(join(tmpdir(), 'wmp-vitest-summary-'));
  afterAll(() => removeDir(work));

  it('a beforeAll failure and an unhandled rejection show in the closing line', async () => {
    const root = fileURLToPath(new URL('../', import.meta.url));
    const json = join(work, 'vitest.json');
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key]; // not a nested worker
    const vitest = await promisify(execFile)(
      process.execPath,
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        '--config',
        'scripts/fixtures/vitest-summary/vitest.config.mjs',
        '--reporter=json',
        '--reporter=./scripts/vitest-run-reporter.mjs',
        `--outputFile.json=${json}`,
      ],
      { cwd: root, env, encoding: 'utf8', timeout: 60_000 },
    ).then(
      () => 0,
      (e: { code?: number }) => e.code ?? -1,
    );
    expect(vitest).toBe(1);
    const runFile = JSON.parse(readFileSync(runReportPath(json), 'utf8')) as VitestRunFile;
    expect(runFile).toMatchObject({ reason: 'failed', unhandledErrors: 1 });
    expect(runFile.failedSuites.map((s) => [s.file, s.error])).toEqual([
      ['before-all-fails.fixture.ts', 'the database did not start'],
    ]);

    const summary = await promisify(execFile)(process.execPath, ['scripts/vitest-summary.mjs', '1', json], {
      cwd: root,
      encoding: 'utf8',
    }).catch((e: { code?: number; stdout: string }) => ({ stdout: e.stdout, code: e.code }));
    expect(summary.stdout.trimEnd().split('\n')).toEqual([
      'vitest: failed suite before-all-fails.fixture.ts: the database did not start',
      'vitest: 2 passed, 0 failed, 3 skipped, 1 failed suite, 1 error - FAILED (vitest exit 1)',
    ]);
  }, 60_000);
});
