import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The README's example is examples/quick-start.ts, verbatim; this test keeps the two from drifting
// and runs the example the way a reader would (package-name imports, resolved to the source).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = fileURLToPath(new URL('../examples/quick-start.ts', import.meta.url));
const readme = fileURLToPath(new URL('../README.md', import.meta.url));

/** What the example prints, line by line, apart from the random DID. */
function expectOutput(lines: string[], path: string): void {
  expect(lines).toEqual([
    `crypto path: ${path}`,
    expect.stringMatching(/^alice: did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$/),
    'jcs: {"a":"héllo","b":[1e+21,0.1,0],"c":{"y":null,"z":true}}',
    'signed by: alice',
    'tampered: -31010 signature',
    'forged: -31010 signer_mismatch',
    'relay hops: 1',
    'still signed by alice: true',
    'challenge key is alice: true',
    'wrong session: -31002 invalid_signed_challenge',
    'a minute late: -31011 clock_skew',
  ]);
}

describe('README example', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('embeds examples/quick-start.ts verbatim in a ts block', () => {
    const code = readFileSync(example, 'utf8');
    expect(code.endsWith('\n')).toBe(true);
    expect(readFileSync(readme, 'utf8')).toContain('\n```ts\n' + code + '```\n');
  });

  it('runs with tsx (node export condition), exits 0 and prints the expected lines', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', example],
      { cwd: root, encoding: 'utf8', timeout: 50_000 },
    ).catch((e: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`example failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
    });
    expect(stderr).toBe('');
    expectOutput(stdout.trimEnd().split('\n'), 'node');
  }, 60_000);

  it("runs in-process on this test project's crypto path (node:crypto or noble)", async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await import('../examples/quick-start.js');
    expectOutput(lines, process.env.WMP_CRYPTO_PATH ?? 'node');
  });
});
