// The servers never outlive the test process that started them, however it ends; and the harness
// works as root (PostgreSQL then runs as `postgres`) and as any other user.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait-for.js';
import { isProcessAlive, removeDir } from './common.js';

interface Started {
  uid: number;
  postgres: { baseDir: string; pid: number; answered: boolean };
  redis: { baseDir: string; pid: number; answered: boolean };
}

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
let work: string;
let bundle: string;

beforeAll(async () => {
  // One ESM file with pg inlined: a non-root user can run it without reading this checkout.
  work = mkdtempSync(join(tmpdir(), 'wmp-harness-cleanup-'));
  chmodSync(work, 0o755);
  await build({
    entry: { child: fileURLToPath(new URL('./fixtures/start-and-exit.ts', import.meta.url)) },
    outDir: work,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/.*/],
    external: ['pg-native'],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    clean: false,
  });
  bundle = join(work, 'child.js');
}, 60_000);
afterAll(() => removeDir(work));

/** Runs the fixture (as `user` via runuser when given) with its temp dirs under `dir`. */
async function runChild(mode: 'exit' | 'sigkill', dir: string, user?: string): Promise<Started> {
  let node = process.execPath;
  if (
    user &&
    !(await run('runuser', ['-u', user, '--', 'test', '-x', node]).then(
      () => true,
      () => false,
    ))
  ) {
    node = join(work, 'node'); // this Node lives where `user` cannot reach it
    if (!existsSync(node)) copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  const [file, args] = user ? ['runuser', ['-u', user, '--', node, bundle, mode]] : [node, [bundle, mode]];
  const child = await run(file, args, { cwd: dir, env: { ...process.env, TMPDIR: dir }, timeout: 60_000 }).catch(
    (e: { stdout?: string; stderr?: string; signal?: string }) => {
      if (mode === 'sigkill' && e.signal === 'SIGKILL') return { stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      throw new Error(`the child failed: ${e.stderr ?? ''}${e.stdout ?? ''}`);
    },
  );
  const line = child.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as Started;
}

async function expectNothingLeft(started: Started, dir: string): Promise<void> {
  const leftovers = () =>
    [
      isProcessAlive(started.postgres.pid) && `postgres pid ${started.postgres.pid}`,
      isProcessAlive(started.redis.pid) && `redis pid ${started.redis.pid}`,
      existsSync(started.postgres.baseDir) && started.postgres.baseDir,
      existsSync(started.redis.baseDir) && started.redis.baseDir,
    ].filter(Boolean);
  await waitFor(() => leftovers().length === 0, 10_000, 'the servers to be gone').catch(() => undefined);
  expect(leftovers()).toEqual([]);
  expect(readdirSync(dir).filter((f) => f.startsWith('wmp-'))).toEqual([]);
}

function childDir(): string {
  const dir = mkdtempSync(join(work, 'run-'));
  chmodSync(dir, 0o777);
  return dir;
}

describe('clean-up', () => {
  it('a test process that exits without stopping its servers leaves nothing behind', async () => {
    const dir = childDir();
    const started = await runChild('exit', dir);
    expect(started.postgres.answered && started.redis.answered).toBe(true);
    expect(started.postgres.baseDir.startsWith(dir)).toBe(true);
    await expectNothingLeft(started, dir);
  }, 60_000);

  it('a test process killed with SIGKILL leaves nothing behind (the watchdog cleans up)', async () => {
    const dir = childDir();
    const started = await runChild('sigkill', dir);
    expect(started.postgres.answered && started.redis.answered).toBe(true);
    await expectNothingLeft(started, dir);
  }, 60_000);

  it(isRoot ? 'works for a non-root user too (nobody)' : 'works for this non-root user', async () => {
    const dir = childDir();
    const started = await runChild('exit', dir, isRoot ? 'nobody' : undefined);
    expect(started.uid).not.toBe(0);
    expect(started.postgres.answered && started.redis.answered).toBe(true);
    await expectNothingLeft(started, dir);
  }, 60_000);
});
