import { defineConfig } from 'tsup';

// Two entries: the browser-safe SDK (`.`) and the Node-only additions (`./node`: the file store).
export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts' },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
