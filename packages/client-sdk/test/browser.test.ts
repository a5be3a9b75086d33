// The SDK in a real browser: its browser entry is bundled with esbuild (platform browser; any Node
// import fails the build), served by a real relay on its own origin, and driven in headless
// Chromium (Debian's /usr/bin/chromium through playwright-core): an identity kept in IndexedDB,
// sealed mail fetched, watched and sent, and a live WMP session over the browser's WebSocket.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Identity, Mailbox } from '../src/index.js';
import { connect, type WmpClient } from '../src/node.js';
import { bundleForBrowser } from './browser-bundle.js';
import type { SdkTestApi } from './browser-page.js';
import { deliver, startTestRelay, type TestRelay, waitFor } from './mailbox-relays.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PAGE = '/sdk-test/';
const srcIndex = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const pageEntry = fileURLToPath(new URL('./browser-page.ts', import.meta.url));

type Api = SdkTestApi;
type Step = keyof Api;

let relay: TestRelay;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

/** Runs `window.sdkTest[step](...args)` in the page. */
function inPage<K extends Step>(step: K, ...args: Parameters<Api[K]>): Promise<Awaited<ReturnType<Api[K]>>> {
  return page.evaluate(
    ([name, a]) => {
      const api = (globalThis as unknown as { sdkTest: Record<string, (...x: unknown[]) => unknown> }).sdkTest;
      return api[name as string]!(...(a as unknown[]));
    },
    [step, args] as const,
  ) as Promise<Awaited<ReturnType<Api[K]>>>;
}

async function loadPage(): Promise<void> {
  await page.goto(relay.origin + PAGE);
  await page.waitForFunction(() => 'sdkTest' in globalThis);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium package (or set CHROMIUM_PATH)`);
  }
  const bundle = await bundleForBrowser(pageEntry);
  relay = await startTestRelay({
    routes: (app) => {
      app.get(PAGE, (c) =>
        c.html('<!doctype html><meta charset="utf-8"><script type="module" src="bundle.js"></script>'),
      );
      app.get(`${PAGE}bundle.js`, (c) =>
        c.body(bundle.code, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
      );
    },
  });
  cleanups.push(() => relay.close());
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  cleanups.push(() => browser.close());
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await loadPage();
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('browser build', () => {
  it('bundles the browser entry without Node built-ins, on the portable crypto path', async () => {
    const { metafile } = await bundleForBrowser(srcIndex);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((f) => f.endsWith('ohan-seal/src/crypto/portable.ts'))).toBe(true);
    expect(inputs.some((f) => f.endsWith('jcs-signing/src/crypto/portable.ts'))).toBe(true);
    expect(inputs.filter((f) => /crypto\/node\.ts$|file-store\.ts$|connect-node\.ts$/.test(f))).toEqual([]);
  });

  it('fails the build when a Node import sneaks in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-browser-build-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const entry = join(dir, 'entry.ts');
    for (const source of [
      `import { readFileSync } from 'node:fs'; export const x = readFileSync;`,
      `import { createHash } from 'crypto'; export const x = createHash;`,
      `export { FileStore } from ${JSON.stringify(fileURLToPath(new URL('../src/node.ts', import.meta.url)))};`,
    ]) {
      writeFileSync(entry, source);
      await expect(bundleForBrowser(entry)).rejects.toThrow(/browser build imports Node-only/);
    }
  });
});

describe('the SDK in headless Chromium', () => {
  let bobDid: string;
  const alice = Identity.generate();
  const aliceMailbox = () => new Mailbox({ identity: alice, relays: [relay.origin] });

  it('runs on the portable crypto path with IndexedDB and no Node globals', async () => {
    expect(await inPage('info')).toEqual({ cryptoPath: 'portable', hasProcess: false, hasIndexedDb: true });
  });

  it('creates an identity in IndexedDB, publishes its card, and keeps the identity across a reload', async () => {
    const opened = await inPage('open', [relay.origin]);
    bobDid = opened.did;
    expect(bobDid).toMatch(/^did:key:z6Mk/);
    expect(opened.keys).toEqual(['identity']);
    expect(await inPage('publishCard', [relay.origin])).toEqual(['stored']);
    await loadPage();
    const again = await inPage('open', [relay.origin]);
    expect(again.did).toBe(bobDid);
    expect(again.keys).toEqual(['identity', 'mailbox/card']);
  });

  it('fetches and opens a sealed message published from Node, once, and acknowledges it', async () => {
    const mailbox = aliceMailbox();
    await mailbox.publishCard([relay.origin]);
    const card = (await mailbox.lookupCard(bobDid, relay.origin))!;
    const bob = { did: bobDid } as Identity;
    const sent = await mailbox.send(card, deliver(alice, bob, 'sealed for the browser'));
    expect(sent.outcomes).toMatchObject([{ ok: true, status: 'stored', stampBits: 8 }]);

    const fetched = await inPage('fetchMail');
    expect(fetched).toEqual({
      messages: [
        { body: 'sealed for the browser', from: alice.did, relay: relay.origin, eventId: sent.outcomes[0]!.eventId },
      ],
      rejected: [],
      errors: [],
    });
    expect(await relay.count()).toBe(0);
    expect((await inPage('fetchMail')).messages).toEqual([]);
    expect(await inPage('storeKeys')).toEqual([
      'identity',
      'mailbox/card',
      `mailbox/relay/${relay.origin}`,
      'mailbox/seen',
    ]);
  });

  it('watches its box: a message sent while watching arrives live', async () => {
    await inPage('watch');
    const mailbox = aliceMailbox();
    const card = (await mailbox.lookupCard(bobDid, relay.origin))!;
    await mailbox.send(card, deliver(alice, { did: bobDid } as Identity, 'live over SSE'));
    await page.waitForFunction(() =>
      (globalThis as unknown as { sdkTest: Api }).sdkTest.watched().includes('live over SSE'),
    );
    expect(await inPage('watched')).toEqual(['live over SSE']);
    await waitFor(async () => (await relay.count()) === 0);
  });

  it('seals and stamps a message in the browser that Node opens', async () => {
    expect(await inPage('sendMail', alice.did, relay.origin, 'from the browser')).toEqual([['stored', 8]]);
    const { messages } = await aliceMailbox().fetch();
    expect(messages.map((m) => [(m.envelope as unknown as { params: { body: string } }).params.body, m.from])).toEqual([
      ['from the browser', bobDid],
    ]);
  });

  it('connects a live WMP session from the browser, and sends and receives through the relay', async () => {
    const wsUrl = `${relay.origin.replace(/^http/, 'ws')}/wmp`;
    expect(await inPage('connect', wsUrl)).toEqual({ state: 'connected', endpoint: 'websocket' });
    cleanups.push(() => inPage('disconnect'));
    const nodeSide: WmpClient = await connect(wsUrl, { identity: alice });
    cleanups.push(() => nodeSide.close());
    const received: unknown[] = [];
    nodeSide.on('message', (m) => void received.push(m.body));

    await nodeSide.send(bobDid, 'hello, browser');
    await page.waitForFunction(() =>
      (globalThis as unknown as { sdkTest: Api }).sdkTest.live().includes('hello, browser'),
    );
    expect(await inPage('sendLive', alice.did, 'hello, node')).toBeDefined();
    await waitFor(() => received.includes('hello, node'));
    expect(await inPage('live')).toEqual(['hello, browser']);
    expect(received).toEqual(['hello, node']);
  });

  it('raised no errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
