// Signed sealed events verified and durably stored per second through the box's publish path:
// `POST /ohan/v1/events` on the box app's fetch handler, in-process (no sockets: a Request is built
// and its body read as a stream, as @hono/node-server does; socket I/O and HTTP parsing are not
// counted), over SQLite (WAL, fsync after each commit, group commit), 100 publishes in flight all the
// time (100 clients, each sending its next event when its last one is answered). Each request is
// read under the body cap, parsed strictly, fully verified (verifyEvent's checks, the Ed25519 one
// on the box's verify worker threads by default) and committed before it is answered 202.
// Baseline in the same run: bare node:crypto Ed25519 verify of the same signed bytes on one core.
// Targets (bench/results/targets.md): >= 60% of the bare figure, and CPU time per stored event <=
// 1.5x the CPU time of one bare verify. The CPU figure is `process.cpuUsage()` over each round,
// which sums every thread of the process (event loop, verify workers, SQLite, and the in-process
// publisher's Request building too), so a verify pool cannot buy throughput with the other core
// unseen. Also reported: the same path with every check on the event loop (verifyThreads 0). The
// baseline and both boxes take turns, round after round, so load from elsewhere falls on all three.
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { base58 } from '@scure/base';
import { generateKeypair, utf8 } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import {
  createEvent,
  generateEncKeypair,
  idPreimage,
  type OhanEvent,
  signEvent,
  signedText,
  unsignedPart,
} from '@wmp/ohan-seal';
import { createBoxApp } from '../packages/relay-server/src/node.js';
import { SqliteStore } from '../packages/relay-server/src/sqlite.js';
import { type Benchmark, median, rate } from './lib.js';

const IN_FLIGHT = 100;
const POOL = 50_000;
const ROUNDS = 5;
const MS = 1000;
const WARM_UP_MS = 600;
const ORIGIN = 'https://box.example';

/**
 * Completions per second of `op` kept `inFlight` deep for about `ms`: each of `inFlight` loops
 * starts its next call when its last one is done, so a slow call never holds the others back
 * (unlike waiting for a whole batch). Calls still running at the end finish but are not counted.
 */
async function sustainedRate(op: () => Promise<unknown>, inFlight: number, ms: number): Promise<number> {
  let done = 0;
  let counting = false;
  let stop = false;
  const loops = Array.from({ length: inFlight }, async () => {
    while (!stop) {
      await op();
      if (counting) done++;
    }
  });
  await new Promise((resolve) => setTimeout(resolve, Math.min(100, ms / 4)));
  counting = true;
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  counting = false;
  const elapsed = performance.now() - start;
  const counted = done;
  stop = true;
  await Promise.all(loops);
  return (counted * 1000) / elapsed;
}

/**
 * A box on its own SQLite file, with a publisher that sends the pool's bodies in order: both boxes
 * get the same events (each box sees each one once).
 */
function openBox(dir: string, bodies: readonly string[], verifyThreads?: number) {
  const store = SqliteStore.open({
    path: join(dir, `box-${verifyThreads ?? 'default'}.db`),
    box: {
      directory: false,
      strangerBits: 0,
      lanes: { contact: 1e9, stranger: 1e9 },
      senderBytes: 2 ** 40,
      recipientBytes: 2 ** 40,
      boxBytes: 2 ** 40,
    },
  });
  const app = createBoxApp({
    store: store.box,
    origin: ORIGIN,
    directory: false,
    rateLimit: false,
    sweepIntervalMs: 0,
    ...(verifyThreads === undefined ? {} : { verifyThreads }),
  });
  // The app unmounted: its routes are relative (the relay mounts it at BOX_API_PREFIX).
  const url = `${ORIGIN}/events`;
  let published = 0;
  let next = 0;
  const stats = { rates: [] as number[], cpuMicros: 0, events: 0 };
  const publishOne = async () => {
    const body = bodies[next++];
    if (body === undefined) throw new Error('event pool exhausted: raise POOL');
    const r = await app.request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    if (r.status !== 202) throw new Error(`publish answered ${r.status}`);
    published++;
  };
  return {
    stats,
    warmUp: () => sustainedRate(publishOne, IN_FLIGHT, WARM_UP_MS),
    /** One measured round; process-wide CPU time: the event loop, the verify workers and SQLite alike. */
    async round() {
      const before = published;
      const cpu = process.cpuUsage();
      stats.rates.push(await sustainedRate(publishOne, IN_FLIGHT, MS));
      const used = process.cpuUsage(cpu);
      stats.cpuMicros += used.user + used.system;
      stats.events += published - before;
    },
    async close() {
      await app.close();
      const stored = (await store.box.totals()).count;
      await store.close();
      if (stored !== published) throw new Error(`stored ${stored} of ${published}`);
    },
  };
}

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
      const exp = rfc3339(start + 7 * 24 * 3600_000 + i * 1000);
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

    let j = 0;
    const bare = { rates: [] as number[], cpuMicros: 0, verifies: 0 };
    const bareVerify = () => {
      const cpu = process.cpuUsage();
      for (let k = 0; k < IN_FLIGHT; k++) {
        const p = prepared[j++ % prepared.length]!;
        if (!verify(null, p.bytes, p.key, p.signature)) throw new Error('bare verify failed');
      }
      const used = process.cpuUsage(cpu);
      bare.cpuMicros += used.user + used.system;
      bare.verifies += IN_FLIGHT;
    };

    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-ohan-publish-'));
    const pooled = openBox(dir, bodies);
    const inline = openBox(dir, bodies, 0);
    try {
      // Not counted: the JIT, the verify workers and the SQLite files settle first.
      await pooled.warmUp();
      await inline.warmUp();
      for (let i = 0; i < ROUNDS; i++) {
        bare.rates.push((await rate(bareVerify, MS)) * IN_FLIGHT);
        await pooled.round();
        await inline.round();
      }
    } finally {
      await pooled.close();
      await inline.close();
      rmSync(dir, { recursive: true, force: true });
    }

    const baseline = median(bare.rates);
    const size = Buffer.byteLength(bodies[0]!);
    const figure = (name: string, box: typeof pooled) => ({
      name: `${name} (${size} B events)`,
      value: median(box.stats.rates),
      unit: 'events/s',
      ratio: median(box.stats.rates) / baseline,
    });
    const main = figure(
      'POST /ohan/v1/events verified + stored, SQLite (fsync after COMMIT), in-process fetch',
      pooled,
    );
    const bareCpu = bare.cpuMicros / bare.verifies;
    const cpuFigure = (name: string, box: typeof pooled) => {
      const value = box.stats.cpuMicros / box.stats.events;
      return { name, value, unit: 'µs', ratio: value / bareCpu };
    };
    const pooledCpu = cpuFigure('CPU time per stored event, all threads (default)', pooled);
    return {
      name: 'ohan-publish',
      baseline: { name: 'bare node:crypto Ed25519 verify', value: baseline, unit: 'verifies/s' },
      figures: [
        { ...main, target: '>= 0.60 of baseline', met: main.ratio >= 0.6 },
        figure('the same, every check on the event loop (verifyThreads 0)', inline),
        { ...pooledCpu, target: '<= 1.5x the CPU of a bare verify', met: pooledCpu.ratio <= 1.5 },
        cpuFigure('CPU time per stored event, all threads (verifyThreads 0)', inline),
        { name: 'CPU time per bare verify', value: bareCpu, unit: 'µs' },
      ],
      conditions: {
        cores: availableParallelism(),
        inFlight: IN_FLIGHT,
        eventBytes: size,
        rounds: ROUNDS,
        roundMs: MS,
        rates: `default ${pooled.stats.rates.map(Math.round).join('/')}; verifyThreads 0 ${inline.stats.rates.map(Math.round).join('/')}; bare ${bare.rates.map(Math.round).join('/')}`,
      },
    };
  },
};

export default bench;
