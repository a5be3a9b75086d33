// `npm test` on a machine without what it needs, and how it ends: run in a copy of the
// repository's scripts with stub programs (tsc, biome, vitest, apt-get, id) on PATH, so nothing
// is installed and no suite runs.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function stub(dir: string, name: string, script: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `#!/bin/bash\n${script}\n`);
  chmodSync(join(dir, name), 0o755);
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A machine with no chromium, PostgreSQL or Redis (as the scripts look for them). */
function bareMachine(bin: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    CHROMIUM_PATH: '/nonexistent/chromium',
    WMP_PG_BINDIR: '',
    WMP_REDIS_SERVER: '/nonexistent/redis-server',
  };
}

describe('scripts/machine-packages.sh', () => {
  const prereqs = join(ROOT, 'scripts/machine-packages.sh');

  it('as root, installs the missing packages with apt-get', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-prereqs-'));
    dirs.push(dir);
    const bin = join(dir, 'bin');
    stub(bin, 'apt-get', `echo "$*" >> ${join(dir, 'apt.log')}`);
    stub(bin, 'id', 'echo 0');
    const { code, stderr } = await run('bash', [prereqs, 'test'], dir, bareMachine(bin));
    expect(code).toBe(0);
    expect(stderr).toContain('npm test: installing chromium');
    expect(readFileSync(join(dir, 'apt.log'), 'utf8')).toMatch(/^install -y -qq chromium( postgresql)? redis-server$/m);
  });

  it('without root or sudo, stops at once with the one command to run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-prereqs-'));
    dirs.push(dir);
    const bin = join(dir, 'bin');
    stub(bin, 'apt-get', `echo called >> ${join(dir, 'apt.log')}; exit 1`);
    stub(bin, 'id', 'echo 1000');
    stub(bin, 'sudo', 'exit 1'); // asks a password: not usable unattended
    const { code, stderr } = await run('bash', [prereqs, 'test'], dir, bareMachine(bin));
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^npm test: needs the Debian packages chromium( postgresql)? redis-server; run: sudo apt-get install -y chromium( postgresql)? redis-server\n$/,
    );
    expect(() => readFileSync(join(dir, 'apt.log'))).toThrow();
  });

  it('names the build tools the first install needs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-prereqs-'));
    dirs.push(dir);
    const bin = join(dir, 'bin');
    stub(bin, 'id', 'echo 1000');
    // Only what the script itself runs, without make, g++ or python3.
    for (const tool of ['bash', 'sed', 'echo', 'apt-get'])
      stub(bin, tool, tool === 'bash' ? 'exec /bin/bash "$@"' : 'exit 0');
    const { code, stderr } = await run('/bin/bash', [prereqs, 'build'], dir, { PATH: bin });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'the install: needs the Debian packages python3 make g++; run: sudo apt-get install -y python3 make g++\n',
    );
  });

  it('does nothing when everything is there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-prereqs-'));
    dirs.push(dir);
    stub(join(dir, 'bin'), 'chromium', 'exit 0');
    stub(join(dir, 'bin'), 'redis-server', 'exit 0');
    const env = {
      ...process.env,
      CHROMIUM_PATH: join(dir, 'bin', 'chromium'),
      WMP_PG_BINDIR: dir,
      WMP_REDIS_SERVER: join(dir, 'bin', 'redis-server'),
    };
    expect(await run('bash', [prereqs, 'test'], dir, env)).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('npm test', () => {
  it('ends with the closing line, even when tests fail: nothing printed after it', async () => {
    // A copy of the root's package.json, ./dev and scripts, with stub tools that "fail" one test.
    const dir = mkdtempSync(join(tmpdir(), 'wmp-npm-test-'));
    dirs.push(dir);
    for (const file of [
      'package.json',
      'dev',
      'scripts/test-all.sh',
      'scripts/node-headers.sh',
      'scripts/vitest-summary.mjs',
      'scripts/vitest-run-reporter.mjs',
    ]) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      copyFileSync(join(ROOT, file), join(dir, file));
    }
    stub(join(dir, 'scripts'), 'machine-packages.sh', 'exit 0');
    const bin = join(dir, 'node_modules/.bin');
    stub(bin, 'tsc', 'exit 0');
    stub(bin, 'biome', 'exit 0');
    stub(bin, 'pnpm', 'echo 12.4.2');
    const report = {
      numPassedTests: 3,
      numFailedTests: 1,
      numPendingTests: 0,
      numTodoTests: 0,
      success: false,
      testResults: [],
    };
    const runFile = { failedSuites: [], unhandledErrors: 0, reason: 'failed' };
    stub(
      bin,
      'vitest',
      `mkdir -p .ci/out; echo '${JSON.stringify(report)}' > .ci/out/vitest.json; echo '${JSON.stringify(runFile)}' > .ci/out/vitest.run.json; echo "FAIL a.test.ts"; exit 1`,
    );
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      WMP_SKIP_INSTALL: '1',
    };
    const result = await run('npm', ['test'], dir, env);
    expect(result.code).toBe(1);
    const lines = `${result.stdout}${result.stderr}`.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(
      'vitest: 3 passed, 1 failed, 0 skipped, 0 failed suites, 0 errors - FAILED (vitest exit 1)',
    );
    expect(result.stdout + result.stderr).not.toMatch(/ELIFECYCLE|Command failed|npm error/);
  });
});
