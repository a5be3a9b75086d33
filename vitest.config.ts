import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// Projects (and their export conditions) are listed in vitest.workspace.ts.
export default defineConfig({
  test: {
    projects,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
