// Request -> answer on sessions routed end to end through one relay (transport §6.2): A -> relay
// -> B -> relay -> A, 50 sessions, one request in flight each, against the same request on 50
// sessions with a WmpServer directly (bench/session-rpc's server), rounds interleaved in one run.
// The relay (SQLite store, as deployed) and the 50 responders (ResponderBridge on each B's relay
// connection) run in processes of their own, the initiators here.
// Target: >= 0.50 of the direct figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeypair, keypairFromSeed, randomBytes } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';
import { type Benchmark, type Figure, median } from './lib.js';
import { startChild } from './servers/child.js';

const SESSIONS = 50;
const ROUND_MS = 1200;
const ROUNDS = 7;
const WARMUP_MS = 1000;

type Calls = { readonly calls: Array<() => Promise<unknown>>; close(): Promise<void> };

async function connect(port: number, path = '/wmp'): Promise<Peer> {
  const peer = new Peer(
    new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}${path}`, WebSocket: WebSocket as never }),
  );
  await peer.start();
  return peer;
}

/** Runs every call in a loop for `ms`; completed calls per second. */
async function drive(calls: Array<() => Promise<unknown>>, ms: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    calls.map(async (call) => {
      while (performance.now() < end) {
        await call();
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - start);
}

/** 50 initiators, each with a hop session at the relay and a session routed to its responder. */
async function routedCalls(port: number, responders: readonly string[]): Promise<Calls> {
  const peers: Peer[] = [];
  const calls: Array<() => Promise<unknown>> = [];
  for (const responder of responders) {
    const keypair = generateKeypair();
    const peer = await connect(port);
    peers.push(peer);
    await WmpSession.open(peer, { signer: keypair, capabilities: { messaging: {}, relay: {} } });
    const session = await WmpSession.open(peer, {
      signer: keypair,
      participants: [responder],
      capabilities: { messaging: {} },
    });
    if (session.relayHosted) throw new Error('the relay hosted a session the responder should have answered');
    calls.push(() => session.request('wmp.capability.list'));
  }
  return { calls, close: async () => void (await Promise.all(peers.map((p) => p.close()))) };
}

/** 50 sessions with a WmpServer directly. */
async function directCalls(port: number): Promise<Calls> {
  const peers: Peer[] = [];
  const calls: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < SESSIONS; i++) {
    const peer = await connect(port);
    peers.push(peer);
    const session = await WmpSession.open(peer, { signer: generateKeypair(), capabilities: { messaging: {} } });
    calls.push(() => session.request('wmp.capability.list'));
  }
  return { calls, close: async () => void (await Promise.all(peers.map((p) => p.close()))) };
}

const bench: Benchmark = {
  name: 'relay-routed-rpc',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'wmp-bench-routed-'));
    // The per-identity request rate (200/s by default) would throttle a load test: raised far out
    // of the way; the limiter still runs on every request.
    const limits = { requestsPerSecond: 1_000_000, requestBurst: 1_000_000 };
    const relay = await startChild('relay-server.ts', ['sqlite', join(dir, 'relay.db'), JSON.stringify(limits)]);
    const seeds = Array.from({ length: SESSIONS }, () => Buffer.from(randomBytes(32)).toString('hex'));
    const responders = await startChild('routed-responders.ts', [String(relay.port), JSON.stringify(seeds)]);
    const direct = await startChild('rpc-server.ts', ['wmp']);
    const fleets: Calls[] = [];
    try {
      const routed = await routedCalls(
        relay.port,
        seeds.map((s) => keypairFromSeed(Buffer.from(s, 'hex')).did),
      );
      fleets.push(routed);
      const bare = await directCalls(direct.port);
      fleets.push(bare);
      await drive(bare.calls, WARMUP_MS);
      await drive(routed.calls, WARMUP_MS);
      const r: number[] = [];
      const d: number[] = [];
      const cpu = { micros: 0, calls: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        d.push(await drive(bare.calls, ROUND_MS));
        const before = await relay.ask('stats');
        const rate = await drive(routed.calls, ROUND_MS);
        const after = await relay.ask('stats');
        r.push(rate);
        cpu.micros += after.cpuMicros! - before.cpuMicros!;
        cpu.calls += (rate * ROUND_MS) / 1000;
      }
      const ratio = median(r) / median(d);
      const baseline = {
        name: `WmpSession.request to a WmpServer directly, ${SESSIONS} sessions`,
        value: median(d),
        unit: 'round trips/s',
      };
      const figures: Figure[] = [
        baseline,
        {
          name: `request -> answer on ${SESSIONS} sessions routed end to end through the relay`,
          value: median(r),
          unit: 'round trips/s',
          ratio,
          target: '>= 0.50 of baseline',
          met: ratio >= 0.5,
        },
        { name: 'relay process CPU per routed round trip', value: cpu.micros / cpu.calls, unit: 'µs' },
      ];
      return {
        name: 'relay-routed-rpc',
        baseline,
        figures,
        conditions: {
          sessions: SESSIONS,
          inFlightPerSession: 1,
          rounds: ROUNDS,
          roundMs: ROUND_MS,
          method: 'wmp.capability.list (answered by the responder)',
          relayStore: 'SQLite (the route is read from the session store, cached)',
          roundsRouted: r.map(Math.round).join(' '),
          roundsDirect: d.map(Math.round).join(' '),
        },
      };
    } finally {
      for (const f of fleets) await f.close();
      await responders.close();
      await direct.close();
      await relay.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
