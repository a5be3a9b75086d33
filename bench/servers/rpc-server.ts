// The server side of bench/session-rpc, in its own process (as in any deployment): `wmp` runs a
// WmpServer over the WebSocket binding, `echo` a bare `ws` echo. Prints the port, then serves
// until stdin closes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WmpServer } from '@wmp/session';
import { attachWebSocketServer } from '@wmp/transports/node';
import { WebSocketServer } from 'ws';

const mode = process.argv[2];
const http = createServer();
if (mode === 'wmp') {
  const server = new WmpServer({ capabilities: { messaging: {} } });
  attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
} else {
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
}
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(http.address() as AddressInfo).port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
