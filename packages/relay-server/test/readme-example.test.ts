import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The README's example is examples/storage.ts, verbatim; this test keeps the two from drifting and
// runs the example the way a reader would (package-name imports, resolved to the source).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = fileURLToPath(new URL('../examples/storage.ts', import.meta.url));
const readme = fileURLToPath(new URL('../README.md', import.meta.url));

function expectOutput(lines: string[]): void {
  expect(lines).toEqual([
    'append: {"status":"queued","seq":1}',
    'retry: {"status":"exists","seq":1}',
    'full: -31014 Queue full max_queued',
    'replay: 1:msg-1 2:msg-2',
    'ack: [{"recipient":"did:key:z6MkBob","seq":1,"id":"msg-1","sender":"did:key:z6MkAlice","delivered":false,"notify":false,"evidence":false}]',
    'verified: true',
    'stranger, no stamp: {"status":"refused","code":"stamp_required"}',
    'contact: {"status":"stored","id":"...","seq":1,"evicted":0}',
    'again: exists',
    'fetch: 1 event(s), seq 1 next 1 more false',
    'after restart: msg-2',
    // The event's JSON: 891 or 892 bytes, with the signature's base58 length.
    expect.stringMatching(/^box totals: \{"count":1,"bytes":89[12]\}$/),
    'delivered: 1',
  ]);
}

describe('README example', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('embeds examples/storage.ts verbatim in a ts block', () => {
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
    expectOutput(stdout.trimEnd().split('\n'));
  }, 60_000);

  it('runs in-process', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    await import('../examples/storage.js');
    expectOutput(lines);
  });
});

describe('README federation example', () => {
  const federation = fileURLToPath(new URL('../examples/federation.ts', import.meta.url));

  it('embeds examples/federation.ts verbatim in a ts block', () => {
    const code = readFileSync(federation, 'utf8');
    expect(readFileSync(readme, 'utf8')).toContain('\n```ts\n' + code + '```\n');
  });

  it('runs with tsx: two relays, the message and its delivered status across them', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', federation],
      { cwd: root, encoding: 'utf8', timeout: 90_000 },
    );
    expect(stderr).toBe('');
    expect(stdout.trimEnd().split('\n')).toEqual([
      'route: true',
      'received: {"hello":"bob"} from alice: true',
      'relay chain hops verified: 2',
      'alice heard: delivered',
    ]);
  }, 120_000);
});
