// The Dockerfile's build stage without Docker (scripts/deploy-smoke.sh): pnpm fetch, offline
// install, build, `pnpm deploy --prod`, then the deploy output alone answers /health. About a
// minute: it builds every package the relay uses with declarations.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './fixtures/relay-process.js';

describe('scripts/deploy-smoke.sh', () => {
  it('builds and prunes the relay like the Dockerfile, and the output runs with plain node', () => {
    const r = spawnSync('scripts/deploy-smoke.sh', { cwd: REPO_ROOT, encoding: 'utf8', timeout: 560_000 });
    expect(r.stderr + r.stdout).toMatch(/deploy-smoke: ok: pnpm deploy output answered \/health/);
    expect(r.status).toBe(0);
  }, 600_000);
});
