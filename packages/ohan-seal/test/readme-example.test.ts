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

const MULTIKEY = /z6Mk[1-9A-HJ-NP-Za-km-z]+/.source;
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/.source;

/** What the example prints, line by line, apart from random keys, times, nonces and hashes. */
function expectOutput(lines: string[], path: string): void {
  expect(lines).toEqual([
    `crypto path: ${path}`,
    'card verified: ohan.card.1 relays ["https://box.example"]',
    'event.protocol: ohan.event.1',
    'event.seal: x25519-sha256-aesgcm-1',
    expect.stringMatching(new RegExp(`^event\\.to: ${MULTIKEY}$`)),
    expect.stringMatching(/^event\.epk: [0-9a-f]{64}$/),
    expect.stringMatching(new RegExp(`^event\\.ts: ${TIME}$`)),
    expect.stringMatching(new RegExp(`^event\\.exp: ${TIME}$`)),
    'event.kind: sealed',
    expect.stringMatching(new RegExp(`^event\\.from_key: ${MULTIKEY}$`)),
    // A ~370-byte envelope pads to 512 bytes: base64 of 12 + 16 + 512 bytes.
    expect.stringMatching(/^event\.payload: [A-Za-z0-9+/]{12}\.\.\. \(720 chars\)$/),
    expect.stringMatching(/^event\.stamp: \{"bits":8,"nonce":"[0-9A-Za-z_-]{11}"\}$/),
    expect.stringMatching(/^event\.id: 00[0-9a-f]{62}$/),
    expect.stringMatching(/^event\.signature: z[1-9A-HJ-NP-Za-km-z]+$/),
    expect.stringMatching(/^verifyEvent: \{"ok":true,"id":"00[0-9a-f]{62}","strength":8\}$/),
    'opened: wmp.message.deliver',
    'Authorization: OHAN-Sig eyJib2R5Ijoi...',
    'request: ok, caller is bob: true',
    'same header again: replay',
    'tampered: id',
  ]);
  const field = (name: string) => lines.find((l) => l.startsWith(`event.${name}: `))?.split(': ')[1];
  expect(field('to')).not.toBe(field('from_key'));
  expect(lines).toContain(`verifyEvent: {"ok":true,"id":"${field('id')}","strength":8}`);
  expect(Date.parse(field('exp')!) - Date.parse(field('ts')!)).toBe(7 * 24 * 3600 * 1000);
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
