// The peer link's WebSocket connects through the guarded fetcher's socket options (issue 23 item
// 2): an endpoint whose name resolves to loopback is never dialled, unless configured.
import { createServer, type Server } from 'node:http';
import { createGuardedFetcher } from '@wmp/session/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodePeerTransport } from '../src/node.js';

let server: Server;
let port = 0;
/** TCP connections the server saw: what was dialled at all. */
let connections = 0;
beforeAll(async () => {
  server = createServer((_req, res) => res.end());
  server.on('connection', () => connections++);
  server.on('upgrade', (_req, socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('nodePeerTransport through the guarded fetcher', () => {
  it('never dials a loopback address a name resolves to, nor a loopback literal; a configured origin it does', async () => {
    const fetcher = createGuardedFetcher({
      resolveAll: async () => [{ address: '127.0.0.1', family: 4 }],
      trusted: (origin) => origin === `http://127.0.0.1:${port}`,
    });
    const transport = nodePeerTransport(fetcher);
    for (const websocket of [`wss://rebound.example:${port}/wmp`, `wss://127.0.0.2:${port}/wmp`]) {
      const refused = await transport({ websocket })
        .start()
        .then(
          () => undefined,
          (e: { code?: string; cause?: { code?: string } }) => e,
        );
      expect(refused, websocket).toMatchObject({ code: 'ERR_WS_CONNECT', cause: { code: 'address_refused' } });
    }
    expect(connections).toBe(0);
    // The socket looks the name up through the guard: with private peers allowed, the name's
    // (loopback) address is where it connects (the TLS handshake then fails: a plain server).
    const closed = nodePeerTransport(
      createGuardedFetcher({ allowPrivate: true, resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] }),
    );
    await expect(closed({ websocket: `wss://rebound.example:${port}/wmp` }).start()).rejects.toBeDefined();
    expect(connections).toBe(1);
    // The operator's own peer on loopback is reached as given (the upgrade is then refused by the server).
    await expect(transport({ websocket: `ws://127.0.0.1:${port}/wmp` }).start()).rejects.toBeDefined();
    expect(connections).toBe(2);
  });
});
