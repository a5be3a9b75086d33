// Request/response round trips per second through WmpServer + WmpSession over WebSocket, with 1
// and 50 connections, against a bare `ws` echo of same-sized frames in the same run. The server
// runs in a child process, the clients in this one.
// Target: >= 50% of the bare figure.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpSession } from '@wmp/session';
import { WebSocketClientTransport } from '@wmp/transports/node';
import { WebSocket } from 'ws';
import { type Benchmark, type Figure, median } from './lib.js';

const ROUND_MS = 1200;
const ROUNDS = 7;

/** Starts bench/servers/rpc-server.ts in a child process; resolves with its URL. */
async function startServer(mode: 'wmp' | 'echo'): Promise<{ url: string; close(): Promise<void> }> {
  // BENCH_RELAY_FLAGS (e.g. a CPU profile) goes to the WMP server only, as for the relay benches.
  const flags = mode === 'wmp' ? (process.env.BENCH_RELAY_FLAGS ?? '').split(/\s+/).filter(Boolean) : [];
  const args = [...flags, '--conditions=@wmp/source', '--import', 'tsx', 'bench/servers/rpc-server.ts', mode];
  const child = spawn(process.execPath, args, {
    cwd: fileURLToPath(new URL('../', import.meta.url)),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', () => reject(new Error('bench server exited')));
  });
  return {
    url: `ws://127.0.0.1:${port}${mode === 'wmp' ? '/wmp' : ''}`,
    close: async () => {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Runs `call` in a loop on every client for `ms` and returns completed calls per second. */
async function drive(calls: Array<() => Promise<unknown>>, ms: number): Promise<number> {
  let done = 0;
  const end = performance.now() + ms;
  const start = performance.now();
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

async function wmpClients(
  url: string,
  n: number,
): Promise<{ calls: Array<() => Promise<unknown>>; close(): Promise<void> }> {
  const peers: Peer[] = [];
  const calls: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < n; i++) {
    const peer = new Peer(new WebSocketClientTransport({ url, WebSocket: WebSocket as never }));
    await peer.start();
    peers.push(peer);
    const session = await WmpSession.open(peer, { signer: generateKeypair(), capabilities: { messaging: {} } });
    calls.push(() => session.request('wmp.capability.list'));
  }
  return { calls, close: async () => void (await Promise.all(peers.map((p) => p.close()))) };
}

async function echoClients(
  url: string,
  n: number,
): Promise<{ calls: Array<() => Promise<unknown>>; close(): Promise<void> }> {
  // The same request frame a session sends, echoed back: the bare cost of the round trip.
  const frame = JSON.stringify({
    jsonrpc: '2.0',
    id: 'req-AAAAAAAAAAAAAAAAAAAAAA',
    method: 'wmp.capability.list',
    params: { wmp: { version: '0.1', session_id: 'ses-AAAAAAAAAAAAAAAAAAAAAA', sender: generateKeypair().did } },
  });
  const sockets: WebSocket[] = [];
  const calls: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < n; i++) {
    const socket = new WebSocket(url);
    await new Promise((r, j) => {
      socket.once('open', r);
      socket.once('error', j);
    });
    sockets.push(socket);
    calls.push(
      () =>
        new Promise<void>((resolve) => {
          socket.once('message', (data) => {
            JSON.parse(String(data));
            resolve();
          });
          socket.send(frame);
        }),
    );
  }
  return {
    calls,
    close: async () => {
      for (const s of sockets) s.terminate();
    },
  };
}

const bench: Benchmark = {
  name: 'session-rpc',
  async run() {
    // Servers run in their own processes, clients here: two cores, as client and server would.
    const wmp = await startServer('wmp');
    const echo = await startServer('echo');
    const figures: Figure[] = [];
    let baselineOne = 0;
    for (const n of [1, 50]) {
      const subject = await wmpClients(wmp.url, n);
      const bare = await echoClients(echo.url, n);
      const s: number[] = [];
      const b: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        b.push(await drive(bare.calls, ROUND_MS));
        s.push(await drive(subject.calls, ROUND_MS));
      }
      await subject.close();
      await bare.close();
      const ratio = median(s) / median(b);
      if (n === 1) baselineOne = median(b);
      figures.push({ name: `bare ws echo, ${n} connection(s)`, value: median(b), unit: 'round trips/s' });
      figures.push({
        name: `WmpSession.request over WebSocket, ${n} connection(s)`,
        value: median(s),
        unit: 'round trips/s',
        ratio,
        target: '>= 0.50 of baseline',
        met: ratio >= 0.5,
      });
    }
    await wmp.close();
    await echo.close();
    return {
      name: 'session-rpc',
      baseline: { name: 'bare ws echo, 1 connection', value: baselineOne, unit: 'round trips/s' },
      figures,
    };
  },
};

export default bench;
