import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import {
  createHttpBinding,
  HttpClientTransport,
  type HttpSessionTransport,
  HttpTransportError,
  ReconnectPolicy,
} from '../src/node.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function listen(app: Hono): Promise<{ base: string; server: Server }> {
  return new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      const server = s as Server;
      cleanups.push(async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      });
      resolve({ base: `http://127.0.0.1:${info.port}`, server });
    });
  });
}

function record(t: HttpClientTransport) {
  const seen = { frames: [] as JsonRpcMessage[], errors: [] as Error[], closes: 0 };
  t.onmessage = (f) => seen.frames.push(JSON.parse(typeof f === 'string' ? f : new TextDecoder().decode(f)));
  t.onerror = (e) => seen.errors.push(e);
  t.onclose = () => seen.closes++;
  return seen;
}

/** The binding with a minimal server side: answers create and echo, remembers its transports. */
async function wmpServer() {
  const transports: HttpSessionTransport[] = [];
  const extras: unknown[] = [];
  const binding = createHttpBinding({
    onTransport: async (t) => {
      transports.push(t);
      t.onmessage = (frame, extra) => {
        extras.push(extra);
        const m = JSON.parse(typeof frame === 'string' ? frame : new TextDecoder().decode(frame)) as {
          id?: string;
          method: string;
        };
        if (m.id === undefined) return;
        const result =
          m.method === 'wmp.session.create' ? { wmp: { version: '0.1', session_id: 'ses-abc' } } : { echo: m.method };
        if (m.method === 'slow.op') {
          void t.send({ jsonrpc: '2.0', method: 'wmp.flow.progress', params: {} }, { relatedRequestId: m.id });
        }
        void t.send({ jsonrpc: '2.0', id: m.id, result }, { relatedRequestId: m.id });
      };
      await t.start();
    },
  });
  cleanups.push(() => binding.close());
  const { base } = await listen(binding.app);
  return { endpoint: `${base}/wmp`, transports, extras, binding };
}

const req = (id: string, method: string): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { wmp: { version: '0.1' } },
});

describe('HttpClientTransport', () => {
  it('creates a session, learns its id and token, and gets server messages over SSE', async () => {
    const server = await wmpServer();
    const client = new HttpClientTransport({ endpoint: server.endpoint });
    cleanups.push(() => client.close());
    const seen = record(client);
    await client.start();
    await client.send(req('1', 'wmp.session.create'));
    expect(seen.frames[0]).toMatchObject({ id: '1', result: { wmp: { session_id: 'ses-abc' } } });
    expect(client.sessionId).toBe('ses-abc');
    expect(client.sessionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    await client.send(req('2', 'wmp.ping'));
    expect(seen.frames[1]).toEqual({ jsonrpc: '2.0', id: '2', result: { echo: 'wmp.ping' } });
    expect(server.extras[1]).toEqual({ sessionId: 'ses-abc' });

    // The event stream opened by itself once the session was known.
    await waitFor(() => server.transports[0] !== undefined);
    await server.transports[0]!.send({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { n: 1 } });
    await waitFor(() => seen.frames.length === 3);
    expect(seen.frames[2]).toMatchObject({ method: 'wmp.message.deliver', params: { n: 1 } });

    // Notifications get 202: nothing to deliver.
    await client.send({ jsonrpc: '2.0', method: 'wmp.message.ack', params: {} });
    expect(seen.frames).toHaveLength(3);

    await client.close();
    expect(seen.closes).toBe(1);
    await expect(client.send(req('3', 'wmp.ping'))).rejects.toMatchObject({ code: 'ERR_HTTP_CLOSED' });
    expect(seen.errors).toEqual([]);
  });

  it('reads streamed (SSE) replies when asked to', async () => {
    const server = await wmpServer();
    const client = new HttpClientTransport({ endpoint: server.endpoint, streamReplies: true, events: false });
    cleanups.push(() => client.close());
    const seen = record(client);
    await client.start();
    await client.send(req('1', 'wmp.session.create'));
    await client.send(req('2', 'slow.op'));
    expect(seen.frames.map((f) => ('method' in f ? f.method : f.id))).toEqual(['1', 'wmp.flow.progress', '2']);
  });

  it('delivers a JSON-RPC refusal body as the outcome, addressed to the request', async () => {
    const server = await wmpServer();
    const client = new HttpClientTransport({ endpoint: server.endpoint, sessionId: 'ses-unknown', events: false });
    cleanups.push(() => client.close());
    const seen = record(client);
    await client.send(req('1', 'wmp.ping'));
    expect(seen.frames).toEqual([
      {
        jsonrpc: '2.0',
        id: '1',
        error: { code: -31000, message: 'Session not found', data: { reason: 'unknown session' } },
      },
    ]);
  });

  it('rejects send with the status when a refusal carries no JSON-RPC body', async () => {
    const app = new Hono();
    app.post('/wmp', () => new Response('nope', { status: 502 }));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const client = new HttpClientTransport({ endpoint: `http://127.0.0.1:${port}/wmp`, events: false });
    cleanups.push(() => client.close());
    await expect(client.send(req('1', 'wmp.ping'))).rejects.toMatchObject({ status: 502 });
  });

  it('reconnects the event stream with Last-Event-ID and honours retry:', async () => {
    const app = new Hono();
    const seenLastIds: (string | undefined)[] = [];
    const seenQueries: (string | undefined)[] = [];
    app.get('/wmp/events', (c) => {
      seenLastIds.push(c.req.header('last-event-id'));
      seenQueries.push(c.req.query('session_id'));
      const n = seenLastIds.length;
      const body =
        n === 1
          ? 'retry: 20\nid: evt-5\nevent: wmp\ndata: {"jsonrpc":"2.0","method":"one"}\n\n'
          : n === 2
            ? 'event: other\ndata: ignored\n\ndata: {"jsonrpc":"2.0","method":"two"}\n\n'
            : ': idle\n\n';
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
    });
    const { base } = await listen(app);
    const client = new HttpClientTransport({
      endpoint: `${base}/wmp`,
      sessionId: 'ses-x',
      reconnect: { initialDelayMs: 5_000 },
    });
    cleanups.push(() => client.close());
    const seen = record(client);
    await client.start();
    await waitFor(() => seen.frames.length === 2);
    expect(seen.frames.map((f) => ('method' in f ? f.method : ''))).toEqual(['one', 'two']);
    await waitFor(() => seenLastIds.length >= 3);
    expect(seenLastIds.slice(0, 3)).toEqual([undefined, 'evt-5', 'evt-5']);
    expect(seenQueries[0]).toBe('ses-x');
  });

  it('stops reconnecting after a permanent refusal, and after maxReconnectAttempts', async () => {
    const app = new Hono();
    let gets = 0;
    app.get('/gone/events', () => new Response(null, { status: 404 }));
    app.get('/flaky/events', () => {
      gets++;
      return new Response(null, { status: 502 });
    });
    const { base } = await listen(app);
    const gone = new HttpClientTransport({ endpoint: `${base}/gone`, sessionId: 's' });
    cleanups.push(() => gone.close());
    const goneSeen = record(gone);
    await gone.start();
    await waitFor(() => goneSeen.errors.length === 1);
    expect(goneSeen.errors[0]).toMatchObject({ status: 404 });

    const flaky = new HttpClientTransport({
      endpoint: `${base}/flaky`,
      sessionId: 's',
      reconnect: { initialDelayMs: 1, maxAttempts: 3 },
    });
    cleanups.push(() => flaky.close());
    const flakySeen = record(flaky);
    await flaky.start();
    await waitFor(() => flakySeen.errors.some((e) => (e as HttpTransportError).code === 'ERR_HTTP_EVENTS_GAVE_UP'));
    expect(gets).toBe(4);
  });

  it('reopens the event stream on the ReconnectPolicy it is given, jitter included', async () => {
    const app = new Hono();
    let gets = 0;
    app.get('/wmp/events', () => {
      gets++;
      return new Response(': idle\n\n', { headers: { 'Content-Type': 'text/event-stream' } });
    });
    const { base } = await listen(app);
    // A 60 s ceiling: only the policy's jitter (drawn as 0 here) lets the stream come back in time.
    const reconnect = new ReconnectPolicy({ initialDelayMs: 60_000, maxDelayMs: 60_000, random: () => 0 });
    const client = new HttpClientTransport({ endpoint: `${base}/wmp`, sessionId: 'ses-x', reconnect });
    cleanups.push(() => client.close());
    record(client);
    await client.start();
    await waitFor(() => gets >= 3);
  });

  it('refuses insecure endpoints unless allowed or loopback', () => {
    expect(() => new HttpClientTransport({ endpoint: 'http://relay.example/wmp' })).toThrow(HttpTransportError);
    expect(() => new HttpClientTransport({ endpoint: 'http://relay.example/wmp', allowInsecure: true })).not.toThrow();
    expect(() => new HttpClientTransport({ endpoint: 'https://relay.example/wmp' })).not.toThrow();
    expect(() => new HttpClientTransport({ endpoint: 'http://localhost:8080/wmp' })).not.toThrow();
  });

  it('bounds reply bodies', async () => {
    const app = new Hono();
    app.post('/wmp', (c) => c.json({ jsonrpc: '2.0', id: '1', result: { pad: 'x'.repeat(5000) } }));
    const { base } = await listen(app);
    const client = new HttpClientTransport({ endpoint: `${base}/wmp`, maxMessageBytes: 1024, events: false });
    cleanups.push(() => client.close());
    const seen = record(client);
    await expect(client.send(req('1', 'wmp.ping'))).rejects.toMatchObject({ code: 'ERR_HTTP_REPLY_TOO_LARGE' });
    expect(seen.frames).toEqual([]);
  });
});
