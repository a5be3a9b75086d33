import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WmpServer } from '@wmp/session';
import { afterAll } from 'vitest';
import { WebSocket } from 'ws';
import { describeVectors, rawClientFrom } from '../../session/test/vector-harness.js';
import { attachWebSocketServer, WebSocketClientTransport } from '../src/node.js';

// Every vector through a real WmpServer over real WebSocket connections on 127.0.0.1.
const listening = new Map<WmpServer, Promise<{ url: string; close(): Promise<void> }>>();
afterAll(async () => {
  for (const l of listening.values()) await (await l).close();
});

function listen(server: WmpServer): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const ws = attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
  return new Promise((resolve) => {
    http.listen(0, '127.0.0.1', () => {
      const { port } = http.address() as AddressInfo;
      resolve({
        url: `ws://127.0.0.1:${port}/wmp`,
        close: async () => {
          await ws.close();
          await new Promise<void>((r) => http.close(() => r()));
        },
      });
    });
  });
}

describeVectors('WebSocket', async (server) => {
  const l = listening.get(server) ?? listen(server);
  listening.set(server, l);
  const client = new WebSocketClientTransport({ url: (await l).url, WebSocket: WebSocket as never });
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
  await client.start();
  return raw;
});
