import { defineConfig } from 'tsup';

// Two entries: the browser-safe interfaces and memory adapters (`.`) and the Node-only SQLite
// adapters (`./node`).
export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
