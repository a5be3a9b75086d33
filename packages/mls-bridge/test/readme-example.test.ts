import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The README's example is examples/quick-start.ts, verbatim; this test keeps the two from drifting
// and runs the example the way a reader would (package-name imports, resolved to the source).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = fileURLToPath(new URL('../examples/quick-start.ts', import.meta.url));
const readme = fileURLToPath(new URL('../README.md', import.meta.url));

const expected = [
  'members: 2 epoch: 1',
  'on the wire: wmp ciphertext | body visible: false',
  'bob reads: Hello Bob',
  'alice reads: Hi Alice',
  'after restart: still there? | from alice: true',
  'replayed: -31004 decrypt_failed',
  'bob after removal: -31004 removed',
];

describe('README example', () => {
  it('embeds examples/quick-start.ts verbatim in a ts block', () => {
    const code = readFileSync(example, 'utf8');
    expect(code.endsWith('\n')).toBe(true);
    expect(readFileSync(readme, 'utf8')).toContain('\n```ts\n' + code + '```\n');
  });

  it('runs with tsx, exits 0 and prints the expected lines', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', example],
      { cwd: root, encoding: 'utf8', timeout: 50_000 },
    ).catch((e: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`example failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
    });
    expect(stderr).toBe('');
    expect(stdout.trimEnd().split('\n')).toEqual(expected);
  }, 60_000);
});
