#!/usr/bin/env node
// The `wmp-relay` command. Installed (no src/ beside it): runs the built dist/main.js. In a
// checkout (`npm start`, `npx wmp-relay`): bundles the relay from the sources when a source is
// newer than the bundle (a few seconds; nothing else is built), and with --demo the demo page,
// then runs that bundle.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const bundler = here('../../../scripts/bundle-app.mjs');

if (existsSync(here('../src/main.ts')) && existsSync(bundler)) {
  const { bundleApp, bundleIsStale } = await import(pathToFileURL(bundler).href);
  if (bundleIsStale('relay')) {
    process.stderr.write('wmp-relay: bundling the relay from the sources...\n');
    await bundleApp('relay');
  }
  // The browser demo page, for `--demo` (`npm run demo`).
  if (process.argv.includes('--demo') && bundleIsStale('demo')) await bundleApp('demo');
  await import(pathToFileURL(here('../dist/wmp-relay.js')).href);
} else {
  await import('../dist/main.js');
}
