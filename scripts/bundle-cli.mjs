// Bundles the `wmp` command from the TypeScript sources (the @wmp/source condition, every
// workspace package inlined) into one ESM file: `./wmp` at the repository root runs it, and the
// CLI tests spawn it. No declarations, no package builds: a few seconds.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Writes the bundle to `file` (e.g. apps/cli/dist/wmp.js). */
export async function bundleCli(file) {
  const out = resolve(file);
  await build({
    entry: { [out.slice(dirname(out).length + 1).replace(/\.js$/, '')]: join(ROOT, 'apps/cli/src/main.ts') },
    outDir: dirname(out),
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/.*/],
    // ws loads these optional native helpers in a try/catch; the relay's SQLite is never reached.
    external: ['bufferutil', 'utf-8-validate', 'better-sqlite3'],
    esbuildOptions(options) {
      options.conditions = ['@wmp/source', 'node', 'import', 'default'];
    },
    // Bundled CommonJS dependencies call require().
    banner: {
      js: "import { createRequire as __wmpRequire } from 'node:module'; const require = __wmpRequire(import.meta.url);",
    },
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    clean: false,
  });
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(process.argv[2] ?? join(ROOT, 'apps/cli/dist/wmp.js'));
}
