import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The README's example is examples/quick-start.ts, verbatim, and it runs as a reader would run it.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = fileURLToPath(new URL('../examples/quick-start.ts', import.meta.url));
const readme = fileURLToPath(new URL('../README.md', import.meta.url));

describe('README example', () => {
  it('embeds examples/quick-start.ts verbatim in a ts block', () => {
    const code = readFileSync(example, 'utf8');
    expect(readFileSync(readme, 'utf8')).toContain('\n```ts\n' + code + '```\n');
  });

  it('runs with tsx, exits 0 and prints the expected lines', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', example],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 50_000,
      },
    );
    expect(stderr).toBe('');
    expect(stdout.trimEnd().split('\n')).toEqual([
      'websocket session: true',
      'http session: true',
      'capabilities over http: {"messaging":{}}',
    ]);
  }, 60_000);
});
