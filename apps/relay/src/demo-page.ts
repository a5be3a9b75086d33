// `--demo`: the SDK's browser demo page at /demo/ (apps/relay/demo: two identities, live and
// sealed messages through this relay), from the bundle in dist/demo/ that `npm run demo` makes.
// Two fixed files, read once at start; nothing else of the disk is served.
import { readFileSync } from 'node:fs';
import type { Relay } from '@wmp/relay-server/node';

export class DemoPageMissingError extends Error {
  override readonly name = 'DemoPageMissingError';
  readonly code = 'ERR_DEMO_PAGE';
}

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // The page's own script, and connections to this origin only (fetch, WebSocket).
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:",
  'cache-control': 'no-store',
};

/** Reads the demo's two files (beside this module's package: dist/demo/) and serves them. */
export function serveDemoPage(relay: Relay, dir = new URL('../dist/demo/', import.meta.url)): void {
  let html: string;
  let script: string;
  try {
    html = readFileSync(new URL('index.html', dir), 'utf8');
    script = readFileSync(new URL('demo.js', dir), 'utf8');
  } catch {
    throw new DemoPageMissingError('--demo: the demo page is not built (npm run demo builds it)');
  }
  relay.app.get('/demo', (c) => c.redirect('/demo/'));
  relay.app.get('/demo/', (c) => c.body(html, 200, PAGE_HEADERS));
  relay.app.get('/demo/demo.js', (c) =>
    c.body(script, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }),
  );
}
