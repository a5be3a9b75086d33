import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ErrorCode, type JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { TransportMessageExtra } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import {
  createHttpBinding,
  type HttpBinding,
  type HttpBindingOptions,
  type HttpSessionTransport,
  readSseStream,
  type SseEvent,
  SseParser,
} from '../src/node.js';

let sessionCounter = 0;

/** Stands in for the Peer: answers request frames, records everything. */
class FakePeer {
  readonly frames: string[] = [];
  readonly extras: (TransportMessageExtra | undefined)[] = [];
  closes = 0;
  constructor(readonly transport: HttpSessionTransport) {
    transport.onmessage = (frame, extra) =>
      this.#receive(typeof frame === 'string' ? frame : new TextDecoder().decode(frame), extra);
    transport.onclose = () => this.closes++;
    void transport.start();
  }

  #answer(m: { id?: unknown; method?: unknown }, extra: TransportMessageExtra | undefined): JsonRpcMessage | undefined {
    if (typeof m !== 'object' || m === null || typeof m.method !== 'string') return undefined;
    if (!('id' in m)) return undefined;
    const id = m.id as string | number;
    if (m.method === 'never.answer' || m.method === 'slow.op') return undefined;
    if (m.method === 'wmp.session.create') {
      const session_id = `ses-${++sessionCounter}`;
      return { jsonrpc: '2.0', id, result: { wmp: { version: '0.1', session_id }, resumption_token: 'rt-1' } };
    }
    return { jsonrpc: '2.0', id, result: { method: m.method, extra: extra ?? null } };
  }

  #receive(text: string, extra: TransportMessageExtra | undefined): void {
    this.frames.push(text);
    this.extras.push(extra);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      void this.transport.send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (Array.isArray(value)) {
      const answers = value.map((m) => this.#answer(m, extra)).filter((a) => a !== undefined);
      if (answers.length > 0) void this.transport.send(answers);
      return;
    }
    const m = value as { id: string | number; method: string };
    if (m.method === 'slow.op') {
      // Progress about the request first, then its answer.
      void this.transport.send(
        { jsonrpc: '2.0', method: 'wmp.flow.progress', params: { step: 1 } },
        { relatedRequestId: m.id },
      );
      setTimeout(
        () =>
          void this.transport.send({ jsonrpc: '2.0', id: m.id, result: { done: true } }, { relatedRequestId: m.id }),
        30,
      );
      return;
    }
    const answer = this.#answer(m, extra);
    if (answer) void this.transport.send(answer, { relatedRequestId: m.id });
  }
}

interface Served {
  base: string;
  url: string;
  binding: HttpBinding;
  server: Server;
  peers: FakePeer[];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function served(options: Partial<HttpBindingOptions> = {}): Promise<Served> {
  const peers: FakePeer[] = [];
  const binding = createHttpBinding({
    ...options,
    onTransport: (t) => {
      peers.push(new FakePeer(t));
    },
  });
  const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
    const s = serve({ fetch: binding.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ server: s as Server, port: info.port }),
    );
  });
  cleanups.push(async () => {
    await binding.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const base = `http://127.0.0.1:${port}`;
  return { base, url: `${base}/wmp`, binding, server, peers };
}

const create = { jsonrpc: '2.0', id: 'c1', method: 'wmp.session.create', params: { wmp: { version: '0.1' } } };
const ping = (id: string | number, sessionId?: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'wmp.ping',
  params: { wmp: { version: '0.1', ...(sessionId ? { session_id: sessionId } : {}) } },
});

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Creates a session; returns its id and token headers. */
async function open(s: Served): Promise<{ id: string; token: string; auth: Record<string, string> }> {
  const res = await post(s.url, create);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { wmp: { session_id: string } } };
  const id = res.headers.get('wmp-session-id')!;
  const token = res.headers.get('wmp-session-token')!;
  expect(id).toBe(body.result.wmp.session_id);
  return { id, token, auth: { 'Wmp-Session-Id': id, 'Wmp-Session-Token': token } };
}

/** An SSE reader over fetch that collects events as they come. */
async function stream(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  let ended = false;
  const done =
    res.ok && res.body
      ? readSseStream(res.body, new SseParser(), (e) => events.push(e))
          .catch(() => undefined)
          .finally(() => {
            ended = true;
          })
      : Promise.resolve();
  cleanups.push(async () => abort.abort());
  return {
    res,
    events,
    get ended() {
      return ended;
    },
    done,
    async take(n: number): Promise<SseEvent[]> {
      await waitFor(() => events.length >= n);
      return events.slice(0, n);
    },
    close: () => abort.abort(),
  };
}

const note = (n: number): JsonRpcMessage => ({ jsonrpc: '2.0', method: 'wmp.message.deliver', params: { n } });

describe('HTTP binding: POST', () => {
  it('creates a session on a POST without one and returns its id and a binding token', async () => {
    const s = await served();
    const { id, token } = await open(s);
    expect(id).toMatch(/^ses-\d+$/);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.binding.sessionCount).toBe(1);
    expect(s.peers[0]!.transport.sessionId).toBe(id);
    expect(s.peers[0]!.extras[0]).toEqual({});
  });

  it('requires the session token afterwards (-31002 for each request, as HTTP 200, without it or with a wrong one)', async () => {
    const s = await served();
    const { id, token } = await open(s);
    const refusals = [
      await post(s.url, ping(1), { 'Wmp-Session-Id': id }),
      await post(s.url, ping(2), { 'Wmp-Session-Id': id, 'Wmp-Session-Token': 'A'.repeat(43) }),
      await post(s.url, ping(3), { 'Wmp-Session-Id': id, 'Wmp-Session-Token': token.slice(1) }),
      await post(s.url, ping(4), { 'Wmp-Session-Id': id, Authorization: `Bearer ${token}x` }),
      // The session named in the body needs the token just the same.
      await post(s.url, ping(5, id)),
    ];
    // A JSON-RPC answer is HTTP 200 (transport §4.2; clients drop the body of a non-2xx answer),
    // addressed to the request by its id.
    // `data.reason` says which: no secret presented (1, 5), or one that is not this session's.
    for (const [i, res] of refusals.entries()) {
      expect(res.status).toBe(200);
      const reason = i === 0 || i === 4 ? 'session token required' : 'session token not valid for this session';
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: i + 1,
        error: { code: ErrorCode.NotAuthorized, message: 'Not authorized', data: { reason } },
      });
    }
    expect(s.peers[0]!.frames).toHaveLength(1); // only the create reached the Peer

    const viaHeader = await post(s.url, ping(6), { 'Wmp-Session-Id': id, 'Wmp-Session-Token': token });
    expect(viaHeader.status).toBe(200);
    expect(await viaHeader.json()).toEqual({
      jsonrpc: '2.0',
      id: 6,
      result: { method: 'wmp.ping', extra: { sessionId: id } },
    });
    const viaBearer = await post(s.url, ping(7), { 'Wmp-Session-Id': id, Authorization: `Bearer ${token}` });
    expect(((await viaBearer.json()) as { result: unknown }).result).toEqual({
      method: 'wmp.ping',
      extra: { sessionId: id, authorization: `Bearer ${token}` },
    });
    // params.wmp.session_id names the session when there is no header.
    const viaBody = await post(s.url, ping(8, id), { 'Wmp-Session-Token': token });
    expect(viaBody.status).toBe(200);
    expect(s.binding.sessionCount).toBe(1);
  });

  it('accepts a bare session id only with allowSessionIdOnly, and never a wrong token header', async () => {
    const s = await served({ allowSessionIdOnly: true });
    const { id } = await open(s);
    expect((await post(s.url, ping(1), { 'Wmp-Session-Id': id })).status).toBe(200);
    expect((await post(s.url, ping(2), { 'Wmp-Session-Id': id, Authorization: 'Bearer app-credential' })).status).toBe(
      200,
    );
    const wrong = await post(s.url, ping(3), { 'Wmp-Session-Id': id, 'Wmp-Session-Token': 'wrong' });
    expect(await wrong.json()).toMatchObject({ id: 3, error: { code: ErrorCode.NotAuthorized } });
  });

  it('can allow a bare session id for some sessions only (a relay: hop sessions, never group sessions)', async () => {
    const allowed = new Set<string>();
    const s = await served({ allowSessionIdOnly: (id) => allowed.has(id) });
    const { id } = await open(s);
    expect(await (await post(s.url, ping(1), { 'Wmp-Session-Id': id })).json()).toMatchObject({
      id: 1,
      error: { code: ErrorCode.NotAuthorized },
    });
    allowed.add(id);
    expect(await (await post(s.url, ping(2), { 'Wmp-Session-Id': id })).json()).toMatchObject({ id: 2, result: {} });
  });

  it('returns its token in the result that opens the session, as the header does', async () => {
    const s = await served();
    const res = await post(s.url, create);
    const token = res.headers.get('wmp-session-token');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(((await res.json()) as { result: { wmp: { session_token?: string } } }).result.wmp.session_token).toBe(
      token,
    );
    // Other results carry no token.
    const id = res.headers.get('wmp-session-id')!;
    const other = await post(s.url, ping(1), { 'Wmp-Session-Id': id, 'Wmp-Session-Token': token! });
    expect(JSON.stringify(await other.json())).not.toContain(token!);
  });

  it('answers an unknown session with -31000 (HTTP 200), except for create/resume which open a new one', async () => {
    const s = await served();
    const res = await post(s.url, ping(1), { 'Wmp-Session-Id': 'ses-nope', 'Wmp-Session-Token': 'x' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 1, error: { code: ErrorCode.SessionNotFound } });
    expect(s.binding.sessionCount).toBe(0);
    const again = await post(s.url, create, { 'Wmp-Session-Id': 'ses-gone' });
    expect(again.status).toBe(200);
    expect(again.headers.get('wmp-session-token')).toBeTruthy();
  });

  it('answers 202 with no body to notifications and responses', async () => {
    const s = await served();
    const { auth } = await open(s);
    const res = await post(s.url, { jsonrpc: '2.0', method: 'wmp.message.ack', params: {} }, auth);
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    const batch = await post(
      s.url,
      [
        { jsonrpc: '2.0', method: 'a' },
        { jsonrpc: '2.0', id: 'srv-1', result: {} },
      ],
      auth,
    );
    expect(batch.status).toBe(202);
    await waitFor(() => s.peers[0]!.frames.length === 3);
    // A session-less notification gets a throwaway transport that is closed at once.
    expect((await post(s.url, { jsonrpc: '2.0', method: 'a' })).status).toBe(202);
    await waitFor(() => s.binding.sessionCount === 1);
    expect(s.peers[1]!.closes).toBe(1);
  });

  it('answers a batch with one array, in body order', async () => {
    const s = await served();
    const { auth } = await open(s);
    const res = await post(s.url, [ping('a'), { jsonrpc: '2.0', method: 'n' }, ping('b')], auth);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Array<{ id: string }>;
    expect(body.map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('hands a body that is not JSON to the Peer and returns its -32700 (id null) on that POST', async () => {
    const s = await served();
    const { auth } = await open(s);
    const res = await post(s.url, '{"jsonrpc":"2.0",', auth);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect(s.peers[0]!.frames[1]).toBe('{"jsonrpc":"2.0",');
  });

  it('refuses a body over maxBodyBytes with 413 before parsing (declared or streamed)', async () => {
    const s = await served({ maxBodyBytes: 1024 });
    const { auth } = await open(s);
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { pad: 'y'.repeat(2000) } });
    const declared = await post(s.url, big, auth);
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.InvalidRequest);
    const bytes = new TextEncoder().encode(big);
    const chunked = await fetch(s.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...auth },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < bytes.length; i += 100) c.enqueue(bytes.subarray(i, i + 100));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(s.peers[0]!.frames).toHaveLength(1);
  });

  it('refuses other content types (415) and methods (405)', async () => {
    const s = await served();
    const res = await fetch(s.url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    expect(res.status).toBe(415);
    expect((await fetch(s.url, { method: 'PUT', body: '{}' })).status).toBe(405);
    expect(s.binding.sessionCount).toBe(0);
  });

  it('times a waiting POST out with 504 and an error for each unanswered request', async () => {
    const s = await served({ pendingTimeoutMs: 100 });
    const { auth } = await open(s);
    const res = await post(s.url, [ping('a'), { jsonrpc: '2.0', id: 'b', method: 'never.answer' }], auth);
    expect(res.status).toBe(504);
    const body = (await res.json()) as Array<{ id: string; result?: unknown; error?: { code: number; data: unknown } }>;
    expect(body[0]).toMatchObject({ id: 'a', result: { method: 'wmp.ping' } });
    // The fake answered 'a' (in an array without 'b'); 'b' never came.
    expect(body.find((r) => r.id === 'b')).toMatchObject({ error: { code: -32603, data: { reason: 'timeout' } } });
  });

  it('streams the answer as SSE when the POST accepts text/event-stream, with related progress first', async () => {
    const s = await served();
    const { auth } = await open(s);
    const res = await post(
      s.url,
      { jsonrpc: '2.0', id: 'op', method: 'slow.op' },
      { ...auth, Accept: 'text/event-stream' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: SseEvent[] = [];
    await readSseStream(res.body!, new SseParser(), (e) => events.push(e));
    expect(events.map((e) => e.event)).toEqual(['wmp', 'wmp']);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ method: 'wmp.flow.progress' });
    expect(JSON.parse(events[1]!.data)).toEqual({ jsonrpc: '2.0', id: 'op', result: { done: true } });
    expect(Number(events[1]!.id)).toBeGreaterThan(Number(events[0]!.id));
  });

  it('streams a create too, with the session headers', async () => {
    const s = await served();
    const res = await post(s.url, create, { Accept: 'application/json, text/event-stream' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('wmp-session-token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const events: SseEvent[] = [];
    await readSseStream(res.body!, new SseParser(), (e) => events.push(e));
    expect(JSON.parse(events[0]!.data).result.wmp.session_id).toBe(res.headers.get('wmp-session-id'));
  });

  it('bounds sessions (503) and waiting POSTs per session (429)', async () => {
    const s = await served({ maxSessions: 1, maxPendingPosts: 1, pendingTimeoutMs: 300 });
    const { auth } = await open(s);
    const full = await post(s.url, create);
    expect(full.status).toBe(503);
    expect(((await full.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.RateLimited);
    const waiting = post(s.url, { jsonrpc: '2.0', id: 1, method: 'never.answer' }, auth);
    await waitFor(() => s.peers[0]!.frames.length === 2);
    expect((await post(s.url, ping(2), auth)).status).toBe(429);
    expect((await waiting).status).toBe(504);
  });

  it('closes idle sessions', async () => {
    const s = await served({ sessionIdleMs: 50 });
    const { auth } = await open(s);
    await waitFor(() => s.peers[0]!.closes === 1, 5_000);
    expect(s.binding.sessionCount).toBe(0);
    expect(await (await post(s.url, ping(1), auth)).json()).toMatchObject({
      id: 1,
      error: { code: ErrorCode.SessionNotFound },
    });
  });

  it('ends a session on DELETE with its token', async () => {
    const s = await served();
    const { id, auth } = await open(s);
    expect((await fetch(s.url, { method: 'DELETE', headers: { 'Wmp-Session-Id': id } })).status).toBe(401);
    expect((await fetch(s.url, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect(s.peers[0]!.closes).toBe(1);
    expect(s.binding.sessionCount).toBe(0);
  });
});

describe('HTTP binding: the end of a WMP session (issue 23 item 4)', () => {
  it('DELETE has the host end the WMP session first (a logout), and keeps everything when that fails', async () => {
    const ended: unknown[] = [];
    let fail = true;
    const s = await served({
      endSession: async (host, sessionId) => {
        if (fail) throw new Error('store down');
        ended.push([host, sessionId]);
      },
    });
    const { id, auth } = await open(s);
    const refused = await fetch(s.url, { method: 'DELETE', headers: auth });
    expect(refused.status).toBe(503);
    expect(s.binding.sessionCount).toBe(1);
    fail = false;
    expect((await fetch(s.url, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect(ended).toEqual([[undefined, id]]);
    expect(s.binding.sessionCount).toBe(0);
  });

  it('ends an HTTP session held here before a stream opens when the host says its WMP session is gone', async () => {
    let live = true;
    const s = await served({ sessionLive: () => live });
    const { id, auth } = await open(s);
    const first = await stream(s.url, auth);
    expect(first.res.status).toBe(200);
    live = false;
    const second = await stream(s.url, auth);
    expect(second.res.status).toBe(404);
    await waitFor(() => first.ended);
    expect(s.binding.sessionCount).toBe(0);
    expect(s.peers[0]!.closes).toBe(1);
    expect(await (await post(s.url, ping(2, id), auth)).json()).toMatchObject({
      error: { code: ErrorCode.SessionNotFound },
    });
  });

  it('sessionEnded: streams and token stop at once, a POST in flight still gets its answer', async () => {
    const s = await served();
    const { id, auth } = await open(s);
    const events = await stream(s.url, auth);
    const inFlight = post(s.url, { jsonrpc: '2.0', id: 'slow', method: 'slow.op', params: {} }, auth);
    await waitFor(() => s.peers[0]!.frames.some((f) => f.includes('slow.op')));
    s.peers[0]!.transport.sessionEnded();
    await waitFor(() => events.ended);
    expect(await (await post(s.url, ping(3, id), auth)).json()).toMatchObject({
      error: { code: ErrorCode.SessionNotFound },
    });
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('"done":true');
    await waitFor(() => s.peers[0]!.closes === 1);
    expect(s.binding.sessionCount).toBe(0);
  });
});

describe('HTTP binding: SSE streams', () => {
  it('gives every event to every subscriber of the session', async () => {
    const s = await served();
    const { id, token } = await open(s);
    const a = await stream(`${s.url}/events?session_id=${id}`, { 'Wmp-Session-Token': token });
    const b = await stream(s.url, { 'Wmp-Session-Id': id, Authorization: `Bearer ${token}` });
    expect(a.res.status).toBe(200);
    expect(b.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const t = s.peers[0]!.transport;
    for (let n = 1; n <= 3; n++) await t.send(note(n));
    for (const sub of [a, b]) {
      const events = await sub.take(3);
      expect(events.map((e) => e.event)).toEqual(['wmp', 'wmp', 'wmp']);
      expect(events.map((e) => JSON.parse(e.data).params.n)).toEqual([1, 2, 3]);
      expect(events.map((e) => e.id)).toEqual(['1', '2', '3']);
    }
  });

  it('replays after Last-Event-ID (header or lastEventId query) from the ring buffer', async () => {
    const s = await served({ replayBuffer: 3 });
    const { id, token, auth } = await open(s);
    const live = await stream(s.url, auth);
    const t = s.peers[0]!.transport;
    for (let n = 1; n <= 5; n++) await t.send(note(n));
    await live.take(5);
    const byHeader = await stream(s.url, { ...auth, 'Last-Event-ID': '3' });
    expect((await byHeader.take(2)).map((e) => JSON.parse(e.data).params.n)).toEqual([4, 5]);
    const byQuery = await stream(`${s.url}/events?session_id=${id}&lastEventId=1`, { 'Wmp-Session-Token': token });
    // Only 3 events are kept: 3, 4, 5.
    expect((await byQuery.take(3)).map((e) => e.id)).toEqual(['3', '4', '5']);
    await t.send(note(6));
    for (const sub of [live, byHeader, byQuery]) await waitFor(() => sub.events.some((e) => e.id === '6'));
  });

  it('holds events sent while no stream is open for the next subscriber', async () => {
    const s = await served();
    const { auth } = await open(s);
    await s.peers[0]!.transport.send(note(1));
    const sub = await stream(s.url, auth);
    expect(JSON.parse((await sub.take(1))[0]!.data).params.n).toBe(1);
    // A second subscriber without Last-Event-ID does not get it again.
    const other = await stream(s.url, auth);
    await s.peers[0]!.transport.send(note(2));
    expect((await other.take(1)).map((e) => e.id)).toEqual(['2']);
  });

  it('refuses streams without a session (400), unknown (404), without a token (401), or too many (429)', async () => {
    const s = await served({ maxSubscribers: 1 });
    const { id, auth } = await open(s);
    expect((await fetch(`${s.url}/events`)).status).toBe(400);
    expect((await fetch(`${s.url}/events?session_id=ses-nope`)).status).toBe(404);
    expect((await fetch(`${s.url}/events?session_id=${id}`)).status).toBe(401);
    await stream(s.url, auth);
    const extra = await fetch(s.url, { headers: auth });
    expect(extra.status).toBe(429);
  });

  it('sends keep-alive comments', async () => {
    const s = await served({ keepAliveMs: 20 });
    const { auth } = await open(s);
    const res = await fetch(s.url, { headers: auth });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes(': keep-alive')) text += (await reader.read()).value;
    await reader.cancel();
  });

  it('ends every stream on close(), so that server.close() returns', async () => {
    const s = await served();
    const { auth } = await open(s);
    const a = await stream(s.url, auth);
    const b = await stream(s.url, auth);
    const waiting = post(s.url, { jsonrpc: '2.0', id: 1, method: 'never.answer' }, auth);
    await waitFor(() => s.peers[0]!.frames.length === 2);
    await s.binding.close();
    await a.done;
    await b.done;
    expect((await waiting).status).toBe(503);
    expect(s.peers[0]!.closes).toBe(1);
    // No closeAllConnections: the binding ended the streams itself.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server.close() hung')), 2_000);
      s.server.close(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  });

  it('answers CORS preflights only when configured', async () => {
    const plain = await served();
    const pre = {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
    };
    expect((await fetch(plain.url, pre)).headers.get('access-control-allow-origin')).toBeNull();
    const withCors = await served({ cors: { origins: ['https://app.example'] } });
    const res = await fetch(withCors.url, pre);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Wmp-Session-Token/i);
    const created = await post(withCors.url, create, { Origin: 'https://app.example' });
    expect(created.headers.get('access-control-expose-headers')).toMatch(/Wmp-Session-Token/i);
  });
});
