// The README's `npm start` and the `wmp-relay` command of a checkout: the relay bundled from the
// sources only when a source is newer than the bundle, started without pnpm in between, and a
// clean stop on Ctrl-C (SIGINT to the whole process group, as a terminal sends it).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleApp, bundleIsStale } from '../../../scripts/bundle-app.mjs';
import { REPO_ROOT, waitFor } from './fixtures/relay-process.js';

const dir = mkdtempSync(join(tmpdir(), 'wmp-start-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, WMP_SKIP_INSTALL: '1', NO_COLOR: '1' };
  for (const k of Object.keys(e)) if (k.startsWith('WMP_') && k !== 'WMP_SKIP_INSTALL') delete e[k];
  return e;
}

describe('npm start', () => {
  it('rebuilds the bundle only when a source is newer', async () => {
    const file = join(dir, 'wmp-relay.js');
    await bundleApp('relay', file);
    expect(bundleIsStale('relay', file)).toBe(false);
    utimesSync(file, new Date(0), new Date(0)); // older than every source
    expect(bundleIsStale('relay', file)).toBe(true);
    expect(bundleIsStale('relay', join(dir, 'none.js'))).toBe(true);
  });

  it('starts the relay on its SQLite data directory (no rebuild when nothing changed) and stops cleanly on Ctrl-C', async () => {
    // Whatever the checkout held, the bundle is fresh after one start.
    await promisify(execFile)('node', ['apps/relay/bin/wmp-relay.js', '--version'], { cwd: REPO_ROOT });
    // The README's `npm start` keeps its data in SQLite: the bundle must load the native driver.
    const child = spawn('npm', ['start', '--', '--data-dir', join(dir, 'data'), '--port', '0'], {
      cwd: REPO_ROOT,
      env: env(),
      detached: true, // its own process group, as a terminal's job
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await waitFor(() => /wmp-relay listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 30_000, 'the relay to listen');
    expect(err).not.toContain('bundling');
    process.kill(-child.pid!, 'SIGINT');
    const { code, signal } = await exited;
    // npm ends as its child's Ctrl-C ends a job (killed by SIGINT, or 0); the relay stopped itself.
    expect(code === 0 || signal === 'SIGINT').toBe(true);
    const lines = err
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event: string; store?: string });
    expect(lines.map((l) => l.event)).toEqual(
      expect.arrayContaining(['relay.started', 'relay.stopping', 'relay.stopped']),
    );
    expect(lines.find((l) => l.event === 'relay.started')?.store).toMatch(/^sqlite:/);
    expect(`${out}${err}`).not.toMatch(/ELIFECYCLE|Command failed|npm error|npm ERR/);
    // Nothing after the relay's last line.
    expect(err.trimEnd().split('\n').at(-1)).toContain('"event":"relay.stopped"');
  });

  it('puts wmp-relay on the workspace PATH: npx wmp-relay --version', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'wmp-relay', '--version'], {
      cwd: REPO_ROOT,
      env: env(),
    });
    expect(stdout).toMatch(/^wmp-relay \d+\.\d+\.\d+\S*\n$/);
  });
});
