import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { waitFor } from '../../../test-support/wait-for.js';
import {
  type AttachWebSocketServerOptions,
  attachWebSocketServer,
  WebSocketClientTransport,
  type WebSocketConstructorLike,
  type WebSocketServerTransport,
  WebSocketTransportError,
  WsCloseCode,
} from '../src/node.js';

const request = (id: number, method = 'wmp.ping'): JsonRpcMessage => ({ jsonrpc: '2.0', id, method, params: {} });

/** Records what a transport reports. */
function record(t: { onmessage?: unknown; onerror?: unknown; onclose?: unknown }) {
  const seen = { frames: [] as string[], errors: [] as Error[], closes: 0 };
  const target = t as {
    onmessage: (f: string | Uint8Array) => void;
    onerror: (e: Error) => void;
    onclose: () => void;
  };
  target.onmessage = (f) => seen.frames.push(typeof f === 'string' ? f : new TextDecoder().decode(f));
  target.onerror = (e) => seen.errors.push(e);
  target.onclose = () => seen.closes++;
  return seen;
}

interface Harness {
  server: Server;
  url: string;
  next(): Promise<WebSocketServerTransport>;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real HTTP server on 127.0.0.1:0 with the WebSocket binding attached. */
async function harness(
  options: Partial<AttachWebSocketServerOptions> & { autoStart?: boolean } = {},
): Promise<Harness> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const waiters: Array<(t: WebSocketServerTransport) => void> = [];
  const attachment = attachWebSocketServer(server, {
    closeGraceMs: 200,
    ...options,
    onTransport: async (t, req) => {
      await options.onTransport?.(t, req);
      waiters.shift()?.(t);
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const h: Harness = {
    server,
    url: `ws://127.0.0.1:${port}/wmp`,
    // Call before connecting: resolves with the next accepted connection.
    next: () => new Promise((resolve) => waiters.push(resolve)),
    async close() {
      await attachment.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  cleanups.push(() => h.close());
  return h;
}

function rawClient(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<WebSocket> {
  const ws = new WebSocket(url, 'wmp.v1', options);
  cleanups.push(async () => ws.terminate());
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** A client transport connected to the harness, and the server transport it was accepted as, both started and recorded. */
async function connected(h: Harness, WebSocketClass: WebSocketConstructorLike = WebSocket) {
  const client = new WebSocketClientTransport({ url: h.url, WebSocket: WebSocketClass });
  const clientSeen = record(client);
  const accepted = h.next();
  await client.start();
  const server = await accepted;
  const serverSeen = record(server);
  await server.start();
  return { client, clientSeen, server, serverSeen };
}

describe('WebSocket binding over a real server', () => {
  it('exchanges frames both ways and echoes the wmp.v1 subprotocol', async () => {
    const { client, clientSeen, server, serverSeen } = await connected(await harness());
    expect(client.protocol).toBe('wmp.v1');
    expect(server.protocol).toBe('wmp.v1');

    await client.send(request(1));
    await client.send([request(2), { jsonrpc: '2.0', method: 'wmp.note' }]);
    await waitFor(() => serverSeen.frames.length === 2);
    expect(JSON.parse(serverSeen.frames[0]!)).toEqual(request(1));
    expect(JSON.parse(serverSeen.frames[1]!)).toHaveLength(2);

    await server.send({ jsonrpc: '2.0', id: 1, result: { ok: true } }, { relatedRequestId: 1 });
    await waitFor(() => clientSeen.frames.length === 1);
    expect(JSON.parse(clientSeen.frames[0]!)).toEqual({ jsonrpc: '2.0', id: 1, result: { ok: true } });

    await client.close();
    await waitFor(() => serverSeen.closes === 1);
    expect(clientSeen.closes).toBe(1);
    await expect(client.send(request(3))).rejects.toMatchObject({ code: 'ERR_WS_NOT_OPEN' });
    await expect(server.send(request(3))).rejects.toBeInstanceOf(WebSocketTransportError);
    expect(serverSeen.closes).toBe(1);
  });

  it('client: frames sent in one turn leave in one write, in order; later turns write again', async () => {
    const h = await harness();
    const sockets: WebSocket[] = [];
    class Recorded extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        sockets.push(this);
      }
    }
    const { client, serverSeen } = await connected(h, Recorded);
    // The TCP socket's writes (`_write` for one chunk, `_writev` for several corked together).
    const raw = (sockets[0] as unknown as { _socket: Record<'_write' | '_writev', (...a: unknown[]) => unknown> })
      ._socket;
    let writes = 0;
    for (const name of ['_write', '_writev'] as const) {
      const original = raw[name].bind(raw);
      raw[name] = (...a: unknown[]) => {
        writes++;
        return original(...a);
      };
    }
    for (let i = 1; i <= 20; i++) void client.send(request(i));
    await waitFor(() => serverSeen.frames.length === 20);
    expect(writes).toBe(1);
    expect(serverSeen.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    // A send in a later turn is not held back by the last turn's cork.
    await client.send(request(21));
    await waitFor(() => serverSeen.frames.length === 21);
    expect(writes).toBe(2);
    await client.close();
    await expect(client.send(request(22))).rejects.toMatchObject({ code: 'ERR_WS_NOT_OPEN' });
  });

  it('sends a message that is already JSON text as it is, and refuses it once closed like send', async () => {
    const { client, clientSeen, server } = await connected(await harness());
    // Byte for byte, whatever JSON.stringify would have written (key order, spacing).
    const text = '{"jsonrpc":"2.0","method":"wmp.note","params":{"b":1,"a":"é"}}';
    await server.sendText(text);
    await waitFor(() => clientSeen.frames.length === 1);
    expect(clientSeen.frames[0]).toBe(text);
    await client.close();
    await waitFor(() => clientSeen.closes === 1);
    await waitFor(
      async () =>
        (await server.sendText(text).then(
          () => 'sent',
          (e: unknown) => e,
        )) !== 'sent',
    );
    await expect(server.sendText(text)).rejects.toMatchObject({ code: 'ERR_WS_NOT_OPEN' });
  });

  it('connects without a subprotocol when the client offers none', async () => {
    const h = await harness();
    const ws = new WebSocket(h.url);
    cleanups.push(async () => ws.terminate());
    await once(ws, 'open');
    expect(ws.protocol).toBe('');
  });

  it('keeps frames that arrive before start() and delivers them in order', async () => {
    const h = await harness();
    const accepted = h.next();
    const ws = await rawClient(h.url);
    ws.send('{"jsonrpc":"2.0","method":"a"}');
    ws.send('{"jsonrpc":"2.0","method":"b"}');
    const server = await accepted;
    // A ping after them: the server's socket answers it once it has read both frames (in order).
    const pong = once(ws, 'pong');
    ws.ping();
    await pong;
    const seen = record(server);
    await server.start();
    expect(seen.frames).toEqual(['{"jsonrpc":"2.0","method":"a"}', '{"jsonrpc":"2.0","method":"b"}']);
  });

  it('refuses a binary frame with 1003 and closes once', async () => {
    const h = await harness();
    const accepted = h.next();
    const ws = await rawClient(h.url);
    const server = await accepted;
    const seen = record(server);
    await server.start();
    const closed = once(ws, 'close');
    ws.send(Buffer.from('{"jsonrpc":"2.0","method":"a"}'), { binary: true });
    const [code] = await closed;
    expect(code).toBe(WsCloseCode.UnsupportedData);
    await waitFor(() => seen.closes === 1);
    expect(seen.frames).toEqual([]);
    expect(seen.errors.map((e) => (e as WebSocketTransportError).code)).toContain('ERR_WS_BINARY_FRAME');
  });

  it('refuses a frame over maxPayload with 1009 before it reaches the Peer', async () => {
    const h = await harness({ maxPayload: 1024 });
    const accepted = h.next();
    const ws = await rawClient(h.url);
    const server = await accepted;
    const seen = record(server);
    await server.start();
    expect(server.maxMessageBytes).toBe(1024);
    const closed = once(ws, 'close');
    ws.send(`"${'x'.repeat(1024)}"`);
    const [code] = await closed;
    expect(code).toBe(WsCloseCode.MessageTooBig);
    await waitFor(() => seen.closes === 1);
    expect(seen.frames).toEqual([]);
    expect(seen.errors).toHaveLength(1);
    // A frame at the limit still passes.
    const accepted2 = h.next();
    const ws2 = await rawClient(h.url);
    const server2 = await accepted2;
    const seen2 = record(server2);
    await server2.start();
    ws2.send(`"${'x'.repeat(1022)}"`);
    await waitFor(() => seen2.frames.length === 1);
  });

  it('terminates a peer that stops answering pings, and keeps one that answers', async () => {
    const h = await harness({ pingIntervalMs: 40, pongTimeoutMs: 250 });
    const silentAccepted = h.next();
    const silent = await rawClient(h.url, { autoPong: false });
    const silentServer = await silentAccepted;
    const silentSeen = record(silentServer);
    await silentServer.start();
    const pings: number[] = [];
    silent.on('ping', () => pings.push(Date.now()));
    const lively = new WebSocketClientTransport({ url: h.url, WebSocket });
    const livelySeen = record(lively);
    const livelyAccepted = h.next();
    await lively.start();
    const livelyServer = await livelyAccepted;
    await livelyServer.start();

    const started = Date.now();
    const [code] = await once(silent, 'close');
    expect(code).toBe(1006); // terminated, no close frame
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(pings.length).toBeGreaterThanOrEqual(4);
    await waitFor(() => silentSeen.closes === 1);
    expect(silentSeen.errors.map((e) => (e as WebSocketTransportError).code)).toContain('ERR_WS_PONG_TIMEOUT');

    // Time is what this checks: the answering peer outlives a pong timeout (250 ms) after the
    // silent one went, and then still carries a frame to the server.
    await new Promise((r) => setTimeout(r, 300));
    expect(livelySeen.closes).toBe(0);
    const livelyServerSeen = record(livelyServer);
    await lively.send(request(9));
    await waitFor(() => livelyServerSeen.frames.length === 1);
  });

  it('answers upgrades on other paths with 404', async () => {
    const h = await harness();
    const ws = new WebSocket(h.url.replace('/wmp', '/nope'), 'wmp.v1');
    const [error] = await once(ws, 'error');
    expect(String(error)).toMatch(/404/);
  });

  it('refuses origins checkOrigin rejects, and connections over maxConnections', async () => {
    const h = await harness({ checkOrigin: (origin) => origin !== 'https://evil.example', maxConnections: 1 });
    const evil = new WebSocket(h.url, 'wmp.v1', { origin: 'https://evil.example' });
    expect(String((await once(evil, 'error'))[0])).toMatch(/403/);
    await rawClient(h.url, { origin: 'https://good.example' });
    const second = new WebSocket(h.url, 'wmp.v1');
    expect(String((await once(second, 'error'))[0])).toMatch(/503/);
  });

  it('closes a connection whose onTransport throws with 1011', async () => {
    const h = await harness({
      onTransport: () => {
        throw new Error('no');
      },
    });
    const ws = await rawClient(h.url);
    const [code] = await once(ws, 'close');
    expect(code).toBe(WsCloseCode.InternalError);
  });

  it('closes every connection with 1001 when the attachment closes', async () => {
    const h = await harness();
    const accepted = h.next();
    const client = new WebSocketClientTransport({ url: h.url, WebSocket });
    const seen = record(client);
    await client.start();
    const server = await accepted;
    const serverSeen = record(server);
    await server.start();
    await h.close();
    await waitFor(() => seen.closes === 1 && serverSeen.closes === 1);
  });

  it('reports a throwing onmessage as an error and keeps the connection', async () => {
    const h = await harness();
    const accepted = h.next();
    const client = new WebSocketClientTransport({ url: h.url, WebSocket });
    await client.start();
    const server = await accepted;
    const seen = record(server);
    let calls = 0;
    server.onmessage = () => {
      calls++;
      throw new Error('handler bug');
    };
    await server.start();
    await client.send(request(1));
    await client.send(request(2));
    await waitFor(() => calls === 2);
    expect(seen.errors.map((e) => e.message)).toEqual(['handler bug', 'handler bug']);
    expect(seen.closes).toBe(0);
  });

  it('shares one port with a hono app served by @hono/node-server', async () => {
    const app = new Hono();
    app.get('/health', (c) => c.text('ok'));
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve({ server: s as Server, port: info.port }),
      );
    });
    const frames: string[] = [];
    const attachment = attachWebSocketServer(server, {
      onTransport: async (t) => {
        t.onmessage = (f) => frames.push(String(f));
        await t.start();
      },
    });
    cleanups.push(async () => {
      await attachment.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    expect(await (await fetch(`http://127.0.0.1:${port}/health`)).text()).toBe('ok');
    const client = new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}/wmp`, WebSocket });
    await client.start();
    await client.send(request(1));
    await waitFor(() => frames.length === 1);
    expect(attachment.connections).toBe(1);
    await client.close();
  });

  it('client: refuses a binary frame from the server with 1003', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    cleanups.push(() => new Promise<void>((r) => wss.close(() => r())));
    const closeCode = new Promise<number>((resolve) =>
      wss.on('connection', (ws) => {
        ws.on('close', (code) => resolve(code));
        ws.send(Buffer.from([1, 2, 3]), { binary: true });
        ws.send('{"jsonrpc":"2.0","method":"late"}');
      }),
    );
    const { port } = wss.address() as AddressInfo;
    const client = new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}`, WebSocket });
    const seen = record(client);
    await client.start();
    expect(await closeCode).toBe(WsCloseCode.UnsupportedData);
    await waitFor(() => seen.closes === 1);
    expect(seen.frames).toEqual([]);
    expect(seen.errors.map((e) => (e as WebSocketTransportError).code)).toEqual(['ERR_WS_BINARY_FRAME']);
  });

  it('client: rejects start() when the connection fails, and fires onclose once', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const client = new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}/wmp`, WebSocket });
    const seen = record(client);
    await expect(client.start()).rejects.toMatchObject({ code: 'ERR_WS_CONNECT' });
    await waitFor(() => seen.closes === 1);
    await expect(client.start()).rejects.toMatchObject({ code: 'ERR_WS_ALREADY_STARTED' });
  });

  it('client: refuses insecure URLs unless allowed or loopback', () => {
    const insecure = () => new WebSocketClientTransport({ url: 'ws://relay.example/wmp', WebSocket });
    expect(insecure).toThrow(WebSocketTransportError);
    expect(insecure).toThrow(expect.objectContaining({ code: 'ERR_WS_INSECURE_URL' }));
    expect(() => new WebSocketClientTransport({ url: 'http://relay.example/wmp', WebSocket })).toThrow(
      WebSocketTransportError,
    );
    expect(
      () => new WebSocketClientTransport({ url: 'ws://relay.example/wmp', WebSocket, allowInsecure: true }),
    ).not.toThrow();
    for (const url of [
      'ws://localhost:1/wmp',
      'ws://127.0.0.2/wmp',
      'ws://[::1]:8080/wmp',
      'wss://relay.example/wmp',
    ]) {
      expect(() => new WebSocketClientTransport({ url, WebSocket })).not.toThrow();
    }
    expect(() => new WebSocketClientTransport({ url: 'ftp://relay.example/', WebSocket })).toThrow(
      WebSocketTransportError,
    );
    // Loopback is an address (or `localhost` itself), never a name that merely looks like one.
    for (const url of ['ws://127.attacker.example/wmp', 'ws://dev.localhost/wmp', 'ws://localhost.attacker.example/']) {
      expect(() => new WebSocketClientTransport({ url, WebSocket }), url).toThrow(WebSocketTransportError);
    }
  });

  it('client: reports a missing WebSocket implementation', async () => {
    const g = globalThis as { WebSocket?: unknown };
    const saved = g.WebSocket;
    delete g.WebSocket;
    try {
      const client = new WebSocketClientTransport({ url: 'wss://relay.example/wmp' });
      await expect(client.start()).rejects.toMatchObject({ code: 'ERR_WS_UNAVAILABLE' });
    } finally {
      if (saved !== undefined) g.WebSocket = saved;
    }
  });
});
