import { defineConfig } from 'tsup';

// Two entries: the `wmp-relay` executable (main, shebang kept, no types) and the library entry
// (index: config parser, key file, startRelayApp) with its declarations.
export default defineConfig({
  entry: { index: 'src/index.ts', main: 'src/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
});
