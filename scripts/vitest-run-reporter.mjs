// A Vitest reporter that records what the JSON report leaves out, next to it
// (`--outputFile.json=X.json` -> `X.run.json`): test files that failed on their own (a failing
// import, beforeAll or afterAll: their tests count as skipped, not failed), unhandled errors,
// and why the run ended. scripts/vitest-summary.mjs reads both files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

/** The run file that goes with a JSON report path. */
export function runReportPath(jsonReport) {
  return jsonReport.replace(/(\.json)?$/, '.run.json');
}

export default class VitestRunReporter {
  /** @param {import('vitest/node').Vitest} vitest */
  onInit(vitest) {
    this.vitest = vitest;
  }

  /**
   * @param {ReadonlyArray<import('vitest/node').TestModule>} testModules
   * @param {ReadonlyArray<unknown>} unhandledErrors
   * @param {'passed' | 'failed' | 'interrupted'} reason
   */
  onTestRunEnd(testModules, unhandledErrors, reason) {
    const config = this.vitest.config;
    const output = typeof config.outputFile === 'string' ? config.outputFile : config.outputFile?.json;
    if (!output) return;
    const failedSuites = [];
    for (const module of testModules) {
      const own = [...module.errors()];
      for (const suite of module.children.allSuites()) own.push(...suite.errors());
      const failedTests = [...module.children.allTests('failed')].length;
      if (own.length > 0 || (module.state() === 'failed' && failedTests === 0)) {
        failedSuites.push({
          file: relative(config.root, module.moduleId),
          project: module.project.name,
          error: own[0]?.message ?? 'failed without a failing test',
        });
      }
    }
    const file = runReportPath(resolve(config.root, output));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      `${JSON.stringify({ reason, unhandledErrors: unhandledErrors.length, failedSuites }, null, 2)}\n`,
    );
  }
}
