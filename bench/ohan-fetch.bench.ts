// Events served per second by cursor: signed `GET /ohan/v1/events?after=SEQ&limit=500` on the box
// app's fetch handler, in-process, over SQLite holding 5000 ~2.6 KB events for one recipient; the
// answer body is read in full as bytes (what goes on the wire; the client's own decoding and JSON
// parsing are not counted). The request signing (client side) is inside the measured loop.
// Baseline in the same run: the same answer text without HTTP: the store's `fetchText` of the same
// pages, the body built by the route's own `eventsPageText` and encoded to UTF-8 bytes (what the
// HTTP path reads); no signature, no routing, no Response. Target: >= 100k events/s
// (bench/results/targets.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import { createEvent, generateEncKeypair, signEvent, signRequest, unsignedPart } from '@wmp/ohan-seal';
import { eventsPageText } from '../packages/relay-server/src/box-api/events-page.js';
import { BOX_API_PREFIX, createBoxApp, mountBoxApp } from '../packages/relay-server/src/node.js';
import { SqliteStore } from '../packages/relay-server/src/sqlite.js';
import { type Benchmark, compareRates } from './lib.js';

const EVENTS = 5000;
const PAGE = 500;
const TARGET = 100_000;
/** Every event is ~2.6 KB: a page shorter than this is not a full page of them. */
const MIN_PAGE_BYTES = PAGE * 2000;

const bench: Benchmark = {
  name: 'ohan-fetch',
  async run() {
    const alice = generateKeypair();
    const bob = generateKeypair();
    const enc = generateEncKeypair();
    const base = await createEvent({
      envelope: { jsonrpc: '2.0', id: 'm', method: 'wmp.message.deliver', params: { body: 'x'.repeat(1200) } },
      to: { key: bob.multikey, enc: enc.multikey },
      from: alice,
    });
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-ohan-fetch-'));
    const store = SqliteStore.open({
      path: join(dir, 'box.db'),
      box: { directory: false, lanes: { contact: 1e6, stranger: 3 }, senderBytes: 2 ** 40, recipientBytes: 2 ** 40 },
    });
    await store.box.putAllow(bob.multikey, [alice.multikey]);
    const start = Date.now();
    for (let i = 0; i < EVENTS; i += 100) {
      const batch = [];
      for (let k = i; k < i + 100; k++) {
        const exp = rfc3339(start + 7 * 24 * 3600_000 + k * 1000);
        batch.push(signEvent({ ...unsignedPart(base), exp }, alice).then((e) => store.box.publish(e)));
      }
      await Promise.all(batch);
    }
    const origin = 'https://box.example';
    const app = createBoxApp({ store: store.box, origin, directory: false, rateLimit: false, sweepIntervalMs: 0 });
    // Mounted as the relay mounts it, so the signed target is the path as sent.
    const root = mountBoxApp(app);
    let cursor = 0;
    let baseCursor = 0;
    try {
      const r = await compareRates(
        async () => {
          const after = cursor;
          cursor = (cursor + PAGE) % EVENTS;
          const target = `${BOX_API_PREFIX}/events?after=${after}&limit=${PAGE}`;
          const authorization = await signRequest({ signer: bob, origin, method: 'GET', target });
          const res = await root.request(origin + target, { headers: { authorization } });
          const bytes = await res.arrayBuffer();
          if (res.status !== 200 || bytes.byteLength < MIN_PAGE_BYTES) throw new Error(`fetch answered ${res.status}`);
        },
        async () => {
          const page = await store.box.fetchText(bob.multikey, baseCursor, PAGE, Date.now());
          baseCursor = (baseCursor + PAGE) % EVENTS;
          const bytes = Buffer.from(eventsPageText(page), 'utf8');
          if (page.items.length !== PAGE || bytes.byteLength < MIN_PAGE_BYTES) throw new Error('short page');
        },
        5,
        400,
      );
      return {
        name: 'ohan-fetch',
        baseline: {
          name: 'fetchText + eventsPageText + UTF-8 of the same pages (the same bytes, no HTTP)',
          value: r.baseline * PAGE,
          unit: 'events/s',
        },
        figures: [
          {
            name: 'GET /ohan/v1/events?limit=500 signed, SQLite, in-process fetch',
            value: r.subject * PAGE,
            unit: 'events/s',
            ratio: r.ratio,
            target: `>= ${TARGET.toLocaleString('en-US')} events/s`,
            met: r.subject * PAGE >= TARGET,
          },
        ],
      };
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
