import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startBox } from './fixtures/box-api-harness.js';

// examples/box-client.ts is the client docs/box-api.md points to: run it as a reader would (tsx,
// package-name imports resolved to the source) against a real box over HTTP, in both modes.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = fileURLToPath(new URL('../examples/box-client.ts', import.meta.url));
afterAll(removeTempDirs);

describe('examples/box-client.ts', () => {
  for (const directory of [true, false]) {
    it(`publishes to and fetches from a running box (directory ${directory})`, async () => {
      const box = await startBox('sqlite', { limits: { directory } });
      try {
        const { stdout, stderr } = await promisify(execFile)(
          'node_modules/.bin/tsx',
          ['--conditions=@wmp/source', example],
          { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, BOX_ORIGIN: box.origin } },
        ).catch((e: { code?: number; stdout?: string; stderr?: string }) => {
          throw new Error(`example failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
        });
        expect(stderr).toBe('');
        expect(stdout.trimEnd().split('\n')).toEqual([
          `limits: ohan.relay.1 directory ${directory}`,
          'allow: 200',
          'publish: 202 true',
          'publish again: 200',
          'fetch: 1 event(s), next 1 more false',
          'opened: {"jsonrpc":"2.0","method":"wmp.message.deliver","params":{"body":"hello, offline Bob"}}',
          'delivered: {"removed":1}',
        ]);
        expect(await box.store.totals()).toEqual({ count: 0, bytes: 0 });
      } finally {
        await box.close();
      }
    }, 40_000);
  }
});

describe('examples/sign-header.ts', () => {
  it('prints a header the box accepts', async () => {
    const box = await startBox('memory');
    try {
      const script = fileURLToPath(new URL('../examples/sign-header.ts', import.meta.url));
      const seed = '11'.repeat(32);
      const target = '/ohan/v1/allow';
      const { stdout } = await promisify(execFile)(
        'node_modules/.bin/tsx',
        ['--conditions=@wmp/source', script, box.origin, 'GET', target],
        { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, SEED: seed } },
      );
      const r = await fetch(box.origin + target, { headers: { authorization: stdout.trim() } });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ contacts: [] });
    } finally {
      await box.close();
    }
  }, 40_000);
});
