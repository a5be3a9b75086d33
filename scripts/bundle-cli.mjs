// Bundles the `wmp` command from the sources (see bundle-app.mjs): `./wmp` runs it, and the CLI
// tests spawn it.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleApp } from './bundle-app.mjs';

/** Writes the bundle to `file` (e.g. apps/cli/dist/wmp.js). */
export function bundleCli(file) {
  return bundleApp('cli', file);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(process.argv[2] ?? join(fileURLToPath(new URL('../', import.meta.url)), 'apps/cli/dist/wmp.js'));
}
