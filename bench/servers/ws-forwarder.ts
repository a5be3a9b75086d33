// The bare baseline of bench/relay-routing, in its own process like the relay: a plain `ws`
// server where each connection names itself (`/?id=<did>`) and every text frame is parsed, its
// `params.to[0]` looked up and the frame sent on to that connection unchanged. No sessions, no
// store, no acknowledgements: the least a router can do. Prints the port, answers `memory` over
// IPC (after GC; started with --expose-gc) and serves until stdin closes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

const http = createServer();
const wss = new WebSocketServer({ server: http });
const byId = new Map<string, WebSocket>();

wss.on('connection', (socket, request) => {
  const id = new URL(request.url ?? '/', 'http://forwarder.invalid').searchParams.get('id') ?? '';
  byId.set(id, socket);
  socket.on('close', () => {
    if (byId.get(id) === socket) byId.delete(id); // only our own mapping (notes: stale-close bug)
  });
  socket.on('message', (data, binary) => {
    const to = (JSON.parse(String(data)) as { params?: { to?: string[] } }).params?.to?.[0];
    const target = to === undefined ? undefined : byId.get(to);
    target?.send(data, { binary });
  });
});

process.on('message', (ask: { id: number; type: string }) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  process.send?.({ id: ask.id, rss: m.rss, heapUsed: m.heapUsed, external: m.external, buffers: m.arrayBuffers });
});

http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(http.address() as AddressInfo).port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
