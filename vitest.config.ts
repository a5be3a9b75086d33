import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// `npm run test:quick` (unit and in-process tests, see vitest.workspace.ts) runs a worker per core
// and reuses each worker's modules across its files (`isolate: false`): most of a file's time in
// the quick run was importing the packages again (111 s of 324 s), and its files hold no state
// between tests that another file could see. `npm test`, the full gate, keeps one isolated worker
// fewer than the cores: its process tests need the spare core on a shared machine.
const quick = process.env.WMP_TEST_QUICK === '1';
const quickPool = quick ? { isolate: false, maxWorkers: availableParallelism() } : {};

// Projects (and their export conditions) are listed in vitest.workspace.ts.
export default defineConfig({
  test: {
    projects,
    ...quickPool,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits on state, never a fixed time: give it room on a busy shared machine
    // (its own default, 1 s, is a timed test in disguise).
    expect: { poll: { timeout: 10_000, interval: 10 } },
  },
});
