import { defineConfig } from 'tsup';

// Two entries: the `wmp` executable (main, shebang kept, no types) and the library entry (index:
// the runner, the command table, help and exit codes) with its declarations.
export default defineConfig({
  entry: { index: 'src/index.ts', main: 'src/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
});
