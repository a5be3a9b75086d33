// Bundles for the browser with esbuild, as an application's bundler would, and fails the build
// on any Node built-in (or `ws`) reached from the entry: the SDK's browser entry must have none.
import { builtinModules } from 'node:module';
import { build, type Metafile, type Plugin } from 'esbuild';

const NODE_ONLY = new Set([...builtinModules, 'ws']);

/** Refuses `node:*`, bare Node built-ins (`fs`, `crypto/...`) and `ws`, naming the importer. */
export const noNodeImports: Plugin = {
  name: 'no-node-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      const name = args.path.startsWith('node:') ? args.path : args.path.split('/')[0]!;
      if (!args.path.startsWith('node:') && !NODE_ONLY.has(name)) return undefined;
      // A dependency's guarded fallback (ts-mls's @hpke/common: `await import("crypto")` only where
      // globalThis.crypto is missing) is never reached in a browser: left out, as bundlers do.
      if (args.kind === 'dynamic-import' && args.importer.includes('/node_modules/')) {
        return { path: args.path, external: true };
      }
      return { errors: [{ text: `browser build imports Node-only "${args.path}" (from ${args.importer})` }] };
    });
  },
};

export interface BrowserBundle {
  readonly code: string;
  readonly metafile: Metafile;
}

/** One ESM file for the browser; workspace packages resolve to their sources (`@wmp/source`). */
export async function bundleForBrowser(entry: string): Promise<BrowserBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    conditions: ['@wmp/source', 'browser'],
    plugins: [noNodeImports],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}
