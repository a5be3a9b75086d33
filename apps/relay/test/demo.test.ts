// The browser demo page (`npm run demo`: wmp-relay --demo) in headless Chromium (Debian's
// /usr/bin/chromium through playwright-core): the page served by a real relay process, two
// identities made in it, a live message each way over their WMP sessions, and a sealed note left
// in the relay's box and fetched, all by clicking the page's buttons.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleApp } from '../../../scripts/bundle-app.mjs';
import { type RelayProcess, startRelayProcess } from './fixtures/relay-process.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-sync',
];

let relay: RelayProcess;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package`);
  await bundleApp('demo'); // what `npm run demo` does when the page's sources changed
  relay = await startRelayProcess(['--ephemeral', '--port', '0', '--demo', '--stranger-bits', '8'], {
    timeoutMs: 60_000,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  relay?.child.kill('SIGTERM');
  await relay?.exited;
});

const logOf = (who: 'alice' | 'bob') => page.locator(`#${who}-log`);

describe('the browser demo page', () => {
  it('is served at /demo/ with a policy that allows only its own script and this origin', async () => {
    const response = await fetch(`${relay.url}/demo/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await response.text()).toContain('<script type="module" src="demo.js"></script>');
  });

  it('sends live messages both ways and a sealed note through the relay', async () => {
    await page.goto(`${relay.url}/demo/`);
    await expect.poll(() => page.locator('#status').textContent()).toBe('ready');
    const [aliceDid, bobDid] = await Promise.all([
      page.locator('#alice-did').textContent(),
      page.locator('#bob-did').textContent(),
    ]);
    expect(aliceDid).toMatch(/^did:key:z6Mk/);
    expect(bobDid).toMatch(/^did:key:z6Mk/);

    await page.click('#start');
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => logOf('bob').textContent()).toContain('card stored');

    await page.click('#alice-live');
    await expect.poll(() => logOf('bob').textContent()).toContain('live from Alice: Hello Bob');
    await page.click('#bob-live');
    await expect.poll(() => logOf('alice').textContent()).toContain('live from Bob: Hi Alice');

    await page.click('#alice-sealed');
    await expect
      .poll(() => logOf('alice').textContent(), { timeout: 30_000 })
      .toContain("sealed to Bob's box: stored, stamp 8 bits");
    await page.click('#bob-fetch');
    await expect.poll(() => logOf('bob').textContent()).toContain('sealed from Alice: sealed: Hello Bob');
    expect(pageErrors).toEqual([]);
  });
});
