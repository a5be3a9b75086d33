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

describe('README example', () => {
  it('embeds examples/quick-start.ts verbatim in a ts block', () => {
    const code = readFileSync(example, 'utf8');
    expect(code.endsWith('\n')).toBe(true);
    expect(readFileSync(readme, 'utf8')).toContain('\n```ts\n' + code + '```\n');
  });

  it('runs with tsx, exits 0 and prints the expected responses', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['--conditions=@wmp/source', example],
      { cwd: root, encoding: 'utf8', timeout: 50_000 },
    ).catch((e: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`example failed (exit ${e.code}):\n${e.stderr ?? ''}${e.stdout ?? ''}`);
    });
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      'wmp.message.deliver from did:example:alice to did:example:bob: Hello Bob',
      'ok: {"jsonrpc":"2.0","id":"req-1","result":{"message_id":"msg-0001","status":"queued"}}',
      'result status: queued',
      'duplicate key: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"duplicate key"}}}',
      'too large: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message too large"}}}',
      expect.stringMatching(
        /^invalid params: \{"jsonrpc":"2\.0","id":"req-4","error":\{"code":-32602,"message":"Invalid params","data":\{"reason":"wmp: /,
      ),
      'unknown method: {"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}',
      'notification answered: false',
    ]);
  }, 60_000);
});
