import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRelay, startRelayProcess } from './fixtures/relay-process.js';

// One SQLite file serves one relay process (docs/architecture.md, "Storage"): a second wmp-relay on
// the same data directory would share the queue without sharing presence, and lose messages.
const dir = mkdtempSync(join(tmpdir(), 'wmp-relay-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the data directory lock', () => {
  it('refuses a second process on the same data directory with exit 2 and a clear message', async () => {
    const first = await startRelayProcess(['--port', '0', '--data-dir', dir, '--log-level', 'error']);
    try {
      const second = await runRelay(['--port', '0', '--data-dir', dir, '--log-level', 'silent']);
      expect(second.code).toBe(2);
      expect(second.stderr).toBe(
        `wmp-relay: --data-dir ${dir}: in use by another wmp-relay process (one process per data directory; run a cluster on PostgreSQL instead)\n`,
      );
      // The first one goes on serving.
      expect((await fetch(`${first.url}/health`)).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    // Once it stopped, the directory is free again.
    const third = await startRelayProcess(['--port', '0', '--data-dir', dir, '--log-level', 'error']);
    third.child.kill('SIGTERM');
    expect(await third.exited).toEqual({ code: 0, signal: null });
  });
});
