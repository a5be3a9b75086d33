import { defineConfig } from 'tsup';

// The crypto path is chosen at import time by the package's `#crypto` import map (node:crypto
// under the `node` condition, noble elsewhere), so both backends are built as their own files
// and `#crypto` stays an external import.
export default defineConfig({
  entry: { index: 'src/index.ts', 'crypto/node': 'src/crypto/node.ts', 'crypto/portable': 'src/crypto/portable.ts' },
  format: ['esm'],
  target: 'node20',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  external: ['#crypto'],
});
