// The client side of bench/idle-connections, in its own process (10k sockets and their
// handshakes stay out of the bench process): `wmp <url> <count>` opens WebSocket sessions on the
// relay, each authenticated with its own key and registered; `bare <url> <count>` opens plain
// sockets on the bare forwarder. A bounded number of handshakes at a time. Prints how many are
// open once all are, then holds them, idle, until stdin closes.
import type { WebSocket } from 'ws';
import { openClient, openSocket } from './wmp-client.js';

const [mode, url, countText] = process.argv.slice(2);
const count = Number(countText);
/** Handshakes in flight at once. */
const CONCURRENCY = 256;

let next = 0;
const open =
  mode === 'wmp'
    ? async (): Promise<WebSocket> => (await openClient(url!)).socket
    : (): Promise<WebSocket> => openSocket(`${url}/?id=${process.pid}-${next}`);

const sockets: WebSocket[] = [];
async function worker(): Promise<void> {
  while (next < count) {
    next++;
    sockets.push(await open());
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
process.stdout.write(`${sockets.length}\n`);

process.stdin.on('end', () => {
  for (const s of sockets) s.terminate();
  process.exit(0);
});
process.stdin.resume();
