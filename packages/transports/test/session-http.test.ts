import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { WmpServer } from '@wmp/session';
import { afterAll } from 'vitest';
import { describeVectors, rawClientFrom } from '../../session/test/vector-harness.js';
import { createHttpBinding, HttpClientTransport } from '../src/node.js';

// Every vector through a real WmpServer over HTTP POST + SSE on 127.0.0.1.
const listening = new Map<WmpServer, Promise<{ endpoint: string; close(): Promise<void> }>>();
afterAll(async () => {
  for (const l of listening.values()) await (await l).close();
});

function listen(server: WmpServer): Promise<{ endpoint: string; close(): Promise<void> }> {
  const binding = createHttpBinding({ onTransport: (t) => server.connect(t).then(() => undefined) });
  return new Promise((resolve) => {
    const http = serve({ fetch: binding.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({
        endpoint: `http://127.0.0.1:${info.port}/wmp`,
        close: async () => {
          await binding.close();
          (http as Server).closeAllConnections();
          await new Promise<void>((r) => http.close(() => r()));
        },
      }),
    );
  });
}

describeVectors('HTTP POST + SSE', async (server) => {
  const l = listening.get(server) ?? listen(server);
  listening.set(server, l);
  const client = new HttpClientTransport({ endpoint: (await l).endpoint, events: true });
  const raw = rawClientFrom(
    (m) => client.send(m as never),
    () => client.close(),
  );
  client.onmessage = (frame) => raw.push(typeof frame === 'string' ? frame : new TextDecoder().decode(frame));
  await client.start();
  return raw;
});
