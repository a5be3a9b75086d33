// The package READMEs run as written by a user of the npm packages: every package packed and
// installed from its tarball (with what the READMEs' install lines name) into a project outside
// the workspace, each README example copied there and run with tsx (no @wmp/source condition,
// nothing resolved from the repository). One install serves every example.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bareImports, embeddedExamples, installLine, packageOf, packages, prepare } from './packed-examples.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'wmp-packed-'));
let project = '';

beforeAll(() => {
  ({ project } = prepare(work));
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What an entry needs beside its package: the optional peer dependency it loads. */
const PEERS: Readonly<Record<string, string>> = {
  '@wmp/relay-server/sqlite': 'better-sqlite3',
  '@wmp/relay-server/postgres': 'pg',
  '@wmp/relay-server/redis': '@redis/client',
  '@wmp/session/sd-jwt': '@sd-jwt/core',
};

const examples = packages().flatMap(({ dir }) => embeddedExamples(dir).map((file) => ({ dir, file })));

/** An example the other examples of its package import (a helper that prints nothing of its own). */
function isHelper(dir: string, file: string): boolean {
  const imported = `'./${file.replace(/\.ts$/, '.js')}'`;
  return embeddedExamples(dir).some(
    (other) =>
      other !== file && readFileSync(join(ROOT, 'packages', dir, 'examples', other), 'utf8').includes(imported),
  );
}

describe('package READMEs', () => {
  it.each(packages().map((p) => p.dir))('%s: the install line names every package its examples import', (dir) => {
    const readme = readFileSync(join(ROOT, 'packages', dir, 'README.md'), 'utf8');
    const installed = new Set(installLine(readme).map(packageOf));
    for (const file of embeddedExamples(dir)) {
      const code = readFileSync(join(ROOT, 'packages', dir, 'examples', file), 'utf8');
      for (const name of bareImports(code)) expect(installed, `${dir}/${file} imports ${name}`).toContain(name);
      for (const [entry, peer] of Object.entries(PEERS)) {
        if (code.includes(`'${entry}'`)) expect(installed, `${dir}/${file} uses ${entry}`).toContain(peer);
      }
    }
  });

  it('the tarballs are what the examples load, not the workspace', () => {
    for (const { manifest } of packages()) {
      const installed = realpathSync(join(project, 'node_modules', manifest.name));
      expect(installed.startsWith(ROOT), manifest.name).toBe(false);
    }
  });

  it.each(examples)(
    '$dir/examples/$file runs from the packed packages',
    async ({ dir, file }) => {
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
        (resolve) => {
          execFile(
            join(project, 'node_modules/.bin/tsx'),
            [join(project, dir, file)],
            { cwd: project, encoding: 'utf8', timeout: 120_000 },
            (error, stdout, stderr) =>
              resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        },
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      if (!isHelper(dir, file)) expect(stdout.trim().length).toBeGreaterThan(0);
    },
    150_000,
  );
});
