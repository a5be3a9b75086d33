// The hostile client of bench/relay-under-attack, in its own process (its CPU is not the load
// generator's): `hostile-load.ts <port> <plan JSON>` attacks the relay on 127.0.0.1:<port> until
// its stdin closes, with bounded loops only:
// - `idle` WebSocket connections that never log in (re-opened when the relay closes them), each
//   sending an unauthenticated `wmp.session.create` every `createEveryMs`;
// - unsigned HTTP creates (`POST /wmp`), one every `httpCreateEveryMs`;
// - a ~1 MiB `wmp.message.deliver` to 256 made-up recipients every `fanoutEveryMs` (one in flight);
// - `slowReaders` registered clients that stop reading, and `slowSenders` clients that send them
//   64 KiB messages, one in flight each.
// Every connection comes from one address, 127.0.0.2: one client, one source to the relay's
// per-source limits. Prints `1` once every connection is open, the floods paused; over IPC,
// `attack` starts them, `pause` stops them (the connections stay), `stats` tells what was sent
// and how the relay answered.
import { request } from 'node:http';
import { generateKeypair } from '@wmp/jcs-signing';
import type { WebSocket } from 'ws';
import { openClient, openSocket, type WmpClient } from './wmp-client.js';

interface Plan {
  readonly idle: number;
  readonly createEveryMs: number;
  readonly httpCreateEveryMs: number;
  readonly fanoutEveryMs: number;
  readonly slowReaders: number;
  readonly slowSenders: number;
}

const [portText, planJson] = process.argv.slice(2);
const port = Number(portText);
const plan = JSON.parse(planJson ?? '{}') as Plan;
const wsUrl = `ws://127.0.0.1:${port}/wmp`;
/** The attacker's one source address. */
const SOURCE = '127.0.0.2';

let running = true;
/** Whether the floods run (the connections are held either way). */
let flooding = false;
const resumers: (() => void)[] = [];
const timers: ReturnType<typeof setInterval>[] = [];
const stats: Record<string, number> = {
  idleOpened: 0,
  idleClosed: 0,
  creates: 0,
  httpCreates: 0,
  fanouts: 0,
  slowSent: 0,
  slowReadersClosed1013: 0,
};
const count = (key: string) => {
  stats[key] = (stats[key] ?? 0) + 1;
};
/** Counts each error answer by code (`error -31007` etc.), from any attacking connection. */
function countAnswers(socket: WebSocket): void {
  socket.on('message', (data) => {
    const text = String(data);
    if (!text.includes('"error"')) return;
    for (const m of [JSON.parse(text)].flat() as { error?: { code: number } }[])
      if (m.error) count(`error ${m.error.code}`);
  });
}
// Frames made once: the attacker's CPU is not what the bench measures.
const strangers = Array.from({ length: 64 }, () => generateKeypair().did);
const create = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"wmp.session.create","params":{"wmp":{"version":"0.1","sender":"${strangers[id % strangers.length]}"},"capabilities_offered":{"messaging":{}}}}`;

/** One idle connection: opened, creating sessions it never authenticates, re-opened when closed. */
async function idle(): Promise<void> {
  let socket: WebSocket;
  try {
    socket = await openSocket(wsUrl, SOURCE);
  } catch {
    if (running) setTimeout(() => void idle(), 200);
    return;
  }
  count('idleOpened');
  countAnswers(socket);
  let n = 0;
  const timer = setInterval(() => {
    if (!flooding || socket.readyState !== 1) return;
    socket.send(create(++n));
    count('creates');
  }, plan.createEveryMs);
  socket.once('close', () => {
    clearInterval(timer);
    count('idleClosed');
    if (running) setTimeout(() => void idle(), 200);
  });
  sockets.push(socket);
}

const sockets: WebSocket[] = [];
const clients: WmpClient[] = [];

/** A logged-in attacking client; the relay's open rate may refuse it for a while (bounded retries). */
async function login(): Promise<WmpClient> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openClient(wsUrl, undefined, SOURCE);
    } catch (e) {
      if (attempt >= 50) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// Huge fan-outs from one logged-in client: refused whole (-31007 fan-out), one in flight.
const fanner = await login();
clients.push(fanner);
countAnswers(fanner.socket);
const madeUp = JSON.stringify(Array.from({ length: 256 }, (_, i) => `${strangers[i % strangers.length]}${i}`));
const hugeBody = 'f'.repeat(1024 * 1024 - 32 * 1024);
let fanId = 0;
let fanInFlight = false;
fanner.socket.on('message', (data) => {
  if (String(data).startsWith('{"jsonrpc":"2.0","id":"fan-')) fanInFlight = false;
});
timers.push(
  setInterval(() => {
    if (!flooding || fanInFlight || fanner.socket.readyState !== 1) return;
    fanInFlight = true;
    count('fanouts');
    fanner.socket.send(
      `{"jsonrpc":"2.0","id":"fan-${++fanId}","method":"wmp.message.deliver","params":{"wmp":${JSON.stringify(fanner.wmp)},"to":${madeUp},"body":"${hugeBody}"}}`,
    );
  }, plan.fanoutEveryMs),
);

// Slow readers: registered, then never read again; senders keep one 64 KiB message in flight each.
const readers: WmpClient[] = [];
for (let i = 0; i < plan.slowReaders; i++) {
  const reader = await login();
  reader.socket.once('close', (code) => {
    if (code === 1013) count('slowReadersClosed1013');
  });
  (reader.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  readers.push(reader);
}
const slowBody = 's'.repeat(64 * 1024);
for (let i = 0; i < plan.slowSenders; i++) {
  const sender = await login();
  clients.push(sender);
  countAnswers(sender.socket);
  let next = 0;
  const send = () => {
    if (!flooding || sender.socket.readyState !== 1 || readers.length === 0) return;
    const to = readers[(next++ + i) % readers.length]!.did;
    count('slowSent');
    sender.socket.send(
      `{"jsonrpc":"2.0","id":"slow-${next}","method":"wmp.message.deliver","params":{"wmp":${JSON.stringify(sender.wmp)},"to":["${to}"],"body":"${slowBody}"}}`,
    );
  };
  // The next one when the previous one was answered (a refusal included): one in flight.
  sender.socket.on('message', (data) => {
    if (String(data).includes('"id":"slow-')) send();
  });
  resumers.push(send);
}

// The logins are done (the floods below spend the source's budget of session opens). Unsigned HTTP
// creates: each holds an HTTP session until the relay's unauthenticated timeout.
timers.push(
  setInterval(() => {
    if (!flooding) return;
    count('httpCreates');
    const req = request({ host: '127.0.0.1', port, path: '/wmp', method: 'POST', localAddress: SOURCE }, (res) => {
      if ((res.statusCode ?? 0) >= 400) count(`http ${res.statusCode}`);
      res.resume();
    });
    req.on('error', () => count('http failed'));
    req.setHeader('content-type', 'application/json');
    req.end(create(1));
  }, plan.httpCreateEveryMs),
);

// Last, the connections that never log in.
await Promise.all(Array.from({ length: plan.idle }, () => idle()));

process.on('message', (ask: { id: number; type: 'attack' | 'pause' | 'stats' }) => {
  if (ask.type === 'attack' && !flooding) {
    flooding = true;
    for (const resume of resumers) resume();
  }
  if (ask.type === 'pause') flooding = false;
  process.send?.({ id: ask.id, ...stats });
});
process.stdout.write('1\n');
process.stdin.on('end', () => {
  running = false;
  for (const t of timers) clearInterval(t);
  for (const s of [...sockets, ...clients.map((c) => c.socket), ...readers.map((r) => r.socket)]) s.terminate();
  process.exit(0);
});
process.stdin.resume();
