import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// Projects (and their export conditions) are listed in vitest.workspace.ts.
export default defineConfig({
  test: {
    projects,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits on state, never a fixed time: give it room on a busy shared machine
    // (its own default, 1 s, is a timed test in disguise).
    expect: { poll: { timeout: 10_000, interval: 10 } },
  },
});
