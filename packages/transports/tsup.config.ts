import { defineConfig } from 'tsup';

// Two entries: the browser-safe bindings (`.`) and the Node-only ones (`./node`).
export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
