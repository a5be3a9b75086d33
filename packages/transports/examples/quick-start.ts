// biome-ignore-all lint/suspicious/noConsole: this example prints what it does
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { generateKeypair } from '@wmp/jcs-signing';
import { Peer, WmpServer, WmpSession } from '@wmp/session';
import {
  attachWebSocketServer,
  createHttpBinding,
  HttpClientTransport,
  WebSocketClientTransport,
} from '@wmp/transports/node';
import { WebSocket } from 'ws';

// One WMP responder, served on one port: HTTP POST + SSE at /wmp, and WebSocket upgrades at /wmp.
const server = new WmpServer({ capabilities: { messaging: {} } });
const http = createHttpBinding({ onTransport: (transport) => server.connect(transport).then(() => undefined) });
const httpServer = await new Promise<Server>((resolve) => {
  const s = serve({ fetch: http.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
});
const ws = attachWebSocketServer(httpServer, {
  path: '/wmp',
  onTransport: (transport) => void server.connect(transport),
});
const port = (httpServer.address() as AddressInfo).port;

// A client over WebSocket (in a browser, leave out `WebSocket`: the global one is used).
const overWs = new Peer(new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}/wmp`, WebSocket }));
await overWs.start();
const a = await WmpSession.open(overWs, { signer: generateKeypair(), capabilities: { messaging: {} } });
console.log('websocket session:', a.id.startsWith('ses-'));

// A client over HTTP: each message is a POST; server notifications arrive on an SSE stream.
const overHttp = new Peer(new HttpClientTransport({ endpoint: `http://127.0.0.1:${port}/wmp`, events: true }));
await overHttp.start();
const b = await WmpSession.open(overHttp, { signer: generateKeypair(), capabilities: { messaging: {} } });
console.log('http session:', b.id.startsWith('ses-'));
console.log(
  'capabilities over http:',
  JSON.stringify(((await b.request('wmp.capability.list')) as { capabilities: unknown }).capabilities),
);

await a.close();
await b.close();
await overWs.close();
await overHttp.close();
await ws.close();
await http.close();
httpServer.closeAllConnections();
httpServer.close();
