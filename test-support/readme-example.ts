// Shared by every package's test/readme-example.test.ts: a README's example is a file of the
// package, embedded verbatim in the README (so the two cannot drift), and it runs the way a reader
// would run it (tsx, package-name imports resolved to the sources).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

export interface ReadmeExample {
  /** `import.meta.url` of the calling test (in the package's `test/` folder). */
  readonly testUrl: string;
  /** The example, relative to the package; default `examples/quick-start.ts`. */
  readonly example?: string;
  /** Checks what the example printed; `path` is the crypto path of the run (`node` or `portable`). */
  readonly expectOutput: (lines: string[], path: string) => void;
  /**
   * Imports the example in this test process too (give `() => import('../examples/x.js')`): in a
   * "(portable)" project that runs it on the portable crypto path.
   */
  readonly importExample?: () => Promise<unknown>;
}

const root = fileURLToPath(new URL('../', import.meta.url));

export function describeReadmeExample(options: ReadmeExample): void {
  const relative = options.example ?? 'examples/quick-start.ts';
  const example = fileURLToPath(new URL(`../${relative}`, options.testUrl));
  const readme = fileURLToPath(new URL('../README.md', options.testUrl));

  describe('README example', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it(`embeds ${relative} verbatim in a ts block`, () => {
      const code = readFileSync(example, 'utf8');
      expect(code.endsWith('\n')).toBe(true);
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
      ).catch((e: { code?: number; stdout?: string; stderr?: string }) => {
        throw new Error(`example failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
      });
      expect(stderr).toBe('');
      options.expectOutput(stdout.trimEnd().split('\n'), 'node');
    }, 60_000);

    if (options.importExample) {
      const load = options.importExample;
      it('runs in-process on this test project’s crypto path', async () => {
        const lines: string[] = [];
        vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
          lines.push(args.map(String).join(' '));
        });
        await load();
        options.expectOutput(lines, process.env.WMP_CRYPTO_PATH ?? 'node');
      });
    }
  });
}
