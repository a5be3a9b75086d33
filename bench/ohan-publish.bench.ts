// Signed sealed events verified and durably stored per second through the box's publish path:
// `POST /ohan/v1/events` on the box app's fetch handler, in-process (no sockets), over SQLite
// (WAL, synchronous=FULL, group commit), 100 publishes in flight. Each request is read under the
// body cap, parsed strictly, run through verifyEvent and committed before it is answered 202.
// Baseline in the same run: bare node:crypto Ed25519 verify of the same signed bytes.
// Target: >= 60% of the bare figure (DESIGN §8).
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base58 } from '@scure/base';
import { generateKeypair, utf8 } from '@wmp/jcs-signing';
import {
  createEvent,
  formatUtcTime,
  generateEncKeypair,
  idPreimage,
  type OhanEvent,
  signEvent,
  signedText,
  unsignedPart,
} from '@wmp/ohan-seal';
import { createBoxApp, SqliteStore } from '../packages/relay-server/src/node.js';
import { type Benchmark, compareRates } from './lib.js';

const IN_FLIGHT = 100;
const POOL = 40_000;
const ROUNDS = 5;
const MS = 300;

const bench: Benchmark = {
  name: 'ohan-publish',
  async run() {
    const senders = Array.from({ length: 16 }, () => generateKeypair());
    const bob = generateKeypair();
    const enc = generateEncKeypair();
    // One sealed event per sender, then distinct events by re-signing with a different exp: each
    // has its own id, so every publish is a real insert (never the cheap "exists" answer).
    const bases: OhanEvent[] = [];
    for (const [i, sender] of senders.entries()) {
      bases.push(
        await createEvent({
          envelope: { jsonrpc: '2.0', id: `m${i}`, method: 'wmp.message.deliver', params: { body: 'x'.repeat(1200) } },
          to: { key: bob.multikey, enc: enc.multikey },
          from: sender,
        }),
      );
    }
    const start = Date.now();
    const bodies: string[] = [];
    const prepared: { key: ReturnType<typeof createPublicKey>; bytes: Uint8Array; signature: Uint8Array }[] = [];
    const keys = senders.map((s) =>
      createPublicKey({
        key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), s.publicKey]),
        format: 'der',
        type: 'spki',
      }),
    );
    for (let i = 0; i < POOL; i++) {
      const s = i % senders.length;
      const exp = formatUtcTime(start + 7 * 24 * 3600_000 + i * 1000);
      const e = await signEvent({ ...unsignedPart(bases[s]!), exp }, senders[s]!);
      bodies.push(JSON.stringify(e));
      if (i < 1024) {
        prepared.push({
          key: keys[s]!,
          bytes: utf8(signedText(idPreimage(e), e.id)),
          signature: base58.decode(e.signature.slice(1)),
        });
      }
    }

    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-ohan-publish-'));
    const store = SqliteStore.open({
      path: join(dir, 'box.db'),
      box: {
        directory: false,
        strangerBits: 0,
        lanes: { contact: 1e9, stranger: 1e9 },
        senderBytes: 2 ** 40,
        recipientBytes: 2 ** 40,
        boxBytes: 2 ** 40,
      },
    });
    const origin = 'https://box.example';
    const app = createBoxApp({ store: store.box, origin, directory: false, rateLimit: false, sweepIntervalMs: 0 });
    // The app unmounted: its routes are relative (the relay mounts it at BOX_API_PREFIX).
    const url = `${origin}/events`;
    let next = 0;
    const publishOne = async () => {
      const body = bodies[next++];
      if (body === undefined) throw new Error('event pool exhausted: raise POOL');
      const r = await app.request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      if (r.status !== 202) throw new Error(`publish answered ${r.status}`);
    };
    let j = 0;
    try {
      const r = await compareRates(
        () => Promise.all(Array.from({ length: IN_FLIGHT }, publishOne)),
        () => {
          for (let k = 0; k < IN_FLIGHT; k++) {
            const p = prepared[j++ % prepared.length]!;
            if (!verify(null, p.bytes, p.key, p.signature)) throw new Error('bare verify failed');
          }
        },
        ROUNDS,
        MS,
      );
      const stored = (await store.box.totals()).count;
      if (stored !== next) throw new Error(`stored ${stored} of ${next}`);
      const size = Buffer.byteLength(bodies[0]!);
      return {
        name: 'ohan-publish',
        baseline: { name: 'bare node:crypto Ed25519 verify', value: r.baseline * IN_FLIGHT, unit: 'verifies/s' },
        figures: [
          {
            name: `POST /ohan/v1/events verified + stored, SQLite FULL, in-process fetch (${size} B events)`,
            value: r.subject * IN_FLIGHT,
            unit: 'events/s',
            ratio: r.ratio,
            target: '>= 0.60 of baseline',
            met: r.ratio >= 0.6,
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
