import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { projects } from './vitest.workspace.js';

// Tests run in Vite's SSR environment, so the custom export condition goes in
// ssr.resolve.conditions: workspace packages resolve to their TypeScript source
// and tests never need a build (a stale dist/ cannot leak in).
export default defineConfig({
  ssr: { resolve: { conditions: ['@wmp/source', ...defaultServerConditions] } },
  test: {
    projects,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
