// Bundles an app (`wmp` or `wmp-relay`) from the TypeScript sources (the @wmp/source condition,
// every workspace package inlined) into one ESM file: no declarations, no package builds, a few
// seconds. `./wmp` and the CLI tests run the CLI's; `npm start` and `npx wmp-relay` in a checkout
// run the relay's (apps/relay/bin/wmp-relay.js), rebuilt only when a source is newer.
import { copyFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Each app: its entry, its default bundle, and what stays outside the bundle: native addons and
 * drivers loaded from the app's own node_modules (beside the bundle), and ws's optional helpers.
 */
export const APPS = {
  cli: {
    entry: 'apps/cli/src/main.ts',
    out: 'apps/cli/dist/wmp.js',
    external: ['bufferutil', 'utf-8-validate', 'better-sqlite3'],
  },
  relay: {
    entry: 'apps/relay/src/main.ts',
    out: 'apps/relay/dist/wmp-relay.js',
    external: ['bufferutil', 'utf-8-validate', 'better-sqlite3', 'pg', 'pg-native', '@redis/client'],
  },
  // The browser demo page `wmp-relay --demo` serves at /demo/: the SDK's browser entry.
  demo: {
    entry: 'apps/relay/demo/demo.ts',
    out: 'apps/relay/dist/demo/demo.js',
    external: [],
    browser: true,
    copy: ['apps/relay/demo/index.html'],
  },
};

/**
 * What the bundle inlines: every import but `external` and its subpaths. tsup asks `noExternal`
 * first, so a match-all pattern there would inline the externals too (better-sqlite3's `bindings`
 * then fails at start on `__filename`, which an ES module has not).
 */
export function inlinedExcept(external) {
  if (external.length === 0) return /.*/;
  const names = external.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^(?!(?:${names.join('|')})(?:/|$))`);
}

/** Writes `app`'s bundle to `file` (default its `out`); resolves the file. */
export async function bundleApp(app, file = join(ROOT, APPS[app].out)) {
  const out = resolve(file);
  if (APPS[app].browser) return bundleBrowser(app, out);
  const { build } = await import('tsup');
  await build({
    entry: { [out.slice(dirname(out).length + 1).replace(/\.js$/, '')]: join(ROOT, APPS[app].entry) },
    outDir: dirname(out),
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [inlinedExcept(APPS[app].external)],
    external: APPS[app].external,
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

/** A page script for the browser (esbuild, as an application's bundler would), with the files beside it. */
async function bundleBrowser(app, out) {
  const { build } = await import('tsup');
  await build({
    entry: { [basename(out).replace(/\.js$/, '')]: join(ROOT, APPS[app].entry) },
    outDir: dirname(out),
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    noExternal: [/.*/],
    // One file: the page loads demo.js only.
    splitting: false,
    esbuildOptions(options) {
      options.conditions = ['@wmp/source', 'browser', 'import', 'default'];
    },
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    clean: false,
  });
  for (const file of APPS[app].copy ?? []) copyFileSync(join(ROOT, file), join(dirname(out), basename(file)));
  return out;
}

/** The newest modification time (ms) of a file under `dir` (node_modules and dist left out). */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether `app`'s bundle is missing or older than a source it is made of (apps/*\/src, packages/*\/src, package.json files). */
export function bundleIsStale(app, file = join(ROOT, APPS[app].out)) {
  let built;
  try {
    built = statSync(file).mtimeMs;
  } catch {
    return true;
  }
  const appDir = join(ROOT, dirname(dirname(APPS[app].entry)));
  // This file too: a bundle made by an older bundler (one that inlined the externals) is stale.
  const sources = [
    fileURLToPath(import.meta.url),
    join(appDir, 'src'),
    join(appDir, 'package.json'),
    join(ROOT, dirname(APPS[app].entry)),
  ];
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    sources.push(join(ROOT, 'packages', pkg, 'src'), join(ROOT, 'packages', pkg, 'package.json'));
  }
  for (const source of sources) {
    let stat;
    try {
      stat = statSync(source);
    } catch {
      continue;
    }
    if ((stat.isDirectory() ? newestUnder(source) : stat.mtimeMs) > built) return true;
  }
  return false;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [app = 'cli', file] = process.argv.slice(2);
  if (!(app in APPS)) throw new Error(`bundle-app: no app "${app}" (${Object.keys(APPS).join(', ')})`);
  await bundleApp(app, file);
}
