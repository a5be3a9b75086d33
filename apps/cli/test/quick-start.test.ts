// The root README's quick start, as a new user types it: its Terminal 2 block run by bash in a
// fresh directory standing for the checkout (`./wmp` is the CLI bundled from these sources), with
// HOME in a temp dir and the relay of the test for `npm start`'s. It must run to the end, and it
// leaves no keys in the checkout.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from './fixtures/relay.js';
import { buildWmp, childEnv, REPO_ROOT, removeWmpBuild, runWmp, tempHomes, wmpBundle } from './fixtures/wmp-process.js';

const homes = tempHomes();
let relay: TestRelay;

beforeAll(async () => {
  [relay] = await Promise.all([startTestRelay(), buildWmp()]);
});
afterAll(async () => {
  await relay?.close();
  homes.cleanup();
  removeWmpBuild();
});

/** The first sh block after "Terminal 2" in the root README. */
function terminalTwo(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf('Terminal 2'));
  const block = /```sh\n([\s\S]*?)```/.exec(after)?.[1];
  if (!block) throw new Error('no Terminal 2 block in README.md');
  return block;
}

function bash(
  script: string,
  cwd: string,
  home: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], {
      cwd,
      env: childEnv({ HOME: home }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end(); // `bob connect` reads commands until its input ends
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the quick start of the root README', () => {
  it('runs to the end as written, and keeps the keys out of the checkout', async () => {
    const checkout = homes.make('checkout');
    const home = homes.make('user-home');
    const wmp = join(checkout, 'wmp');
    writeFileSync(wmp, `#!/bin/sh\nexec "${process.execPath}" "${wmpBundle()}" "$@"\n`);
    chmodSync(wmp, 0o755);
    const script = terminalTwo().replaceAll('http://127.0.0.1:8080', relay.url);
    expect(script).toContain('./wmp --home ~/.wmp-demo/alice');

    const run = await bash(script, checkout, home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^did:key:z6Mk\S+: hello Bob$/m);
    expect(run.stdout).toMatch(/^delivered to did:key:z6Mk\S+ \(message msg-\S+\)$/m);
    expect(run.stdout).toContain(`queued at ${relay.url} for did:key:`);
    expect(run.stdout).toMatch(/^\[\S+\] did:key:z6Mk\S+: a sealed note$/m);
    expect(run.stdout).toMatch(/^did:key:z6Mk\S+: are you there\?$/m);
    expect(run.stderr).toMatch(/^connected to http:\/\/127\.0\.0\.1:\d+ as did:key:/m);

    expect(readdirSync(checkout)).toEqual(['wmp']);
    for (const who of ['alice', 'bob']) {
      expect(existsSync(join(home, '.wmp-demo', who, 'store', 'identity'))).toBe(true);
      expect(readFileSync(join(home, '.wmp-demo', who, '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    }
  }, 120_000);

  it('`wmp` with no command fails with the usage on stderr', async () => {
    const bare = await runWmp([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^Usage: wmp /);
  });
});
