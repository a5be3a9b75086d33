import { ErrorCode, InvalidParamsError, WmpError } from '@wmp/jsonrpc-envelope';
import { describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { ConnectionClosedError, InMemoryTransport, Peer, RequestTimeoutError } from '../src/index.js';

async function pair(options: ConstructorParameters<typeof Peer>[1] = {}) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Peer(a);
  const server = new Peer(b, options);
  await Promise.all([client.start(), server.start()]);
  return { client, server, a, b };
}

/** Frames the raw side receives, parsed. */
function capture(t: InMemoryTransport): unknown[] {
  const got: unknown[] = [];
  t.onmessage = (frame) => got.push(JSON.parse(String(frame)));
  return got;
}

describe('Peer', () => {
  it('correlates requests and responses both ways, and answers {} for an empty result', async () => {
    const { client, server } = await pair();
    server.setRequestHandler('echo', (params) => params);
    server.setRequestHandler('nothing', () => undefined);
    client.setRequestHandler('ping', () => 'pong');
    await expect(client.request('echo', { a: 1 })).resolves.toEqual({ a: 1 });
    await expect(client.request('nothing')).resolves.toEqual({});
    await expect(server.request('ping')).resolves.toBe('pong');
  });

  it('delivers notifications without answering them', async () => {
    const { server, a } = await pair();
    const seen: unknown[] = [];
    server.setNotificationHandler('note', (p) => void seen.push(p));
    server.setRequestHandler('marker', () => ({}));
    const got = capture(a);
    await a.send({ jsonrpc: '2.0', method: 'note', params: { x: 1 } } as never);
    await a.send({ jsonrpc: '2.0', method: 'unknown.note', params: {} } as never);
    // A request after them: its answer is the only frame that may come back, after both were handled.
    await a.send({ jsonrpc: '2.0', id: 1, method: 'marker' } as never);
    await waitFor(() => got.length === 1);
    expect(got).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(seen).toEqual([{ x: 1 }]);
  });

  it('sends a notification given as text through a binding that sends text, and from its params otherwise', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const texts: string[] = [];
    // A binding that sends text: it gets the text as it is, never the params.
    const withText = Object.assign(a, {
      sendText: async (text: string) => {
        texts.push(text);
      },
    });
    const sender = new Peer(withText);
    await sender.start();
    await b.start();
    await sender.notify('note', { x: 1 }, undefined, '{"jsonrpc":"2.0","method":"note","params":{"x":1,"y":2}}');
    expect(texts).toEqual(['{"jsonrpc":"2.0","method":"note","params":{"x":1,"y":2}}']);
    // Without `sendText` (InMemoryTransport has none), the frame is written from the params.
    const [c, d] = InMemoryTransport.createLinkedPair();
    const plain = new Peer(c);
    await plain.start();
    const seen = capture(d);
    await d.start();
    await plain.notify('note', { x: 1 }, undefined, '{"jsonrpc":"2.0","method":"note","params":{"x":1,"y":2}}');
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual([{ jsonrpc: '2.0', method: 'note', params: { x: 1 } }]);
  });

  it('answers an unknown method with -32601 and a WmpError with itself', async () => {
    const { client, server } = await pair();
    server.setRequestHandler('bad', () => {
      throw new InvalidParamsError({ reason: 'x' });
    });
    await expect(client.request('missing')).rejects.toMatchObject({ code: ErrorCode.MethodNotFound });
    await expect(client.request('bad')).rejects.toMatchObject({ code: ErrorCode.InvalidParams, data: { reason: 'x' } });
  });

  it('turns any other exception into -32603 without its message', async () => {
    const errors: unknown[] = [];
    const { client, server } = await pair({ onHandlerError: (e) => errors.push(e) });
    server.setRequestHandler('boom', () => {
      throw new Error('secret path /etc/shadow');
    });
    const e = (await client.request('boom').catch((x) => x)) as WmpError;
    expect(e).toBeInstanceOf(WmpError);
    expect(e.toJsonRpc()).toEqual({ code: -32603, message: 'Internal error' });
    expect(errors).toHaveLength(1);
  });

  it('answers a batch as one array, without the notifications, entry by entry', async () => {
    const { server, a } = await pair();
    server.setRequestHandler('echo', (p) => p);
    const got = capture(a);
    a.send([
      { jsonrpc: '2.0', id: 1, method: 'echo', params: { n: 1 } },
      { jsonrpc: '2.0', method: 'echo', params: { n: 2 } },
      { jsonrpc: '2.0', id: 3, method: 'missing' },
    ] as never);
    // The batch's answer is written once all its entries are done, so anything else about them
    // (an answer to the notification) would have come by then; a request after the batch shows
    // the peer still answers, and is answered on its own (it may overtake the batch).
    a.send({ jsonrpc: '2.0', id: 4, method: 'echo', params: { marker: true } } as never);
    await waitFor(() => got.some(Array.isArray) && got.some((m) => (m as { id?: unknown }).id === 4));
    expect(got).toHaveLength(2);
    expect(got.find(Array.isArray)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { n: 1 } },
      {
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32601, message: 'Method not found', data: { reason: 'unknown method' } },
      },
    ]);
  });

  it('answers malformed frames with an error of id null and keeps serving', async () => {
    const { server, a, b } = await pair();
    server.setRequestHandler('echo', (p) => p);
    const got = capture(a);
    b.receiveRaw('{"jsonrpc":"2.0","id":1,');
    b.receiveRaw('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"a":2}}');
    b.receiveRaw('[]');
    b.receiveRaw(new Uint8Array([0xff, 0xfe]));
    b.receiveRaw(`{"jsonrpc":"2.0","id":2,"method":"echo","params":${'['.repeat(40)}${']'.repeat(40)}}`);
    b.receiveRaw('{"jsonrpc":"2.0","id":9,"method":"echo","params":{"ok":true}}');
    // The last one, well-formed, is answered after everything before it.
    await waitFor(() => (got.at(-1) as { id?: unknown } | undefined)?.id === 9);
    expect(got.map((m) => (m as { error?: { code: number } }).error?.code ?? 'ok')).toEqual([
      -32700,
      -32600,
      -32600,
      -32700,
      -32600,
      'ok',
    ]);
    expect((got[0] as { id: unknown }).id).toBeNull();
  });

  it('rejects every pending call with ConnectionClosedError when the transport closes', async () => {
    const { client, server, b } = await pair();
    let started = 0;
    server.setRequestHandler('slow', () => {
      started++;
      return new Promise(() => undefined);
    });
    const calls = [client.request('slow'), client.request('slow')];
    await waitFor(() => started === 2);
    await b.close();
    for (const c of calls) await expect(c).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(client.request('slow')).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('times out and aborts calls, and frees their slots', async () => {
    const { client, server } = await pair();
    server.setRequestHandler('slow', () => new Promise(() => undefined));
    await expect(client.request('slow', {}, { timeoutMs: 20 })).rejects.toBeInstanceOf(RequestTimeoutError);
    const ac = new AbortController();
    const call = client.request('slow', {}, { signal: ac.signal });
    ac.abort(new Error('user gave up'));
    await expect(call).rejects.toThrow('user gave up');
  });

  it('refuses incoming calls over its concurrency bound with -31007', async () => {
    const { client, server } = await pair({ maxConcurrentHandlers: 2 });
    server.setRequestHandler('slow', () => new Promise((r) => setTimeout(() => r('done'), 50)));
    const results = await Promise.allSettled([client.request('slow'), client.request('slow'), client.request('slow')]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as WmpError).code))).toEqual([
      'done',
      'done',
      -31007,
    ]);
  });

  it('aborts the handlers signal when the connection closes', async () => {
    const { client, server, a } = await pair();
    let aborted = false;
    let started = false;
    server.setRequestHandler('wait', (_p, ctx) => {
      started = true;
      return new Promise((r) =>
        ctx.signal.addEventListener('abort', () => {
          aborted = true;
          r(true);
        }),
      );
    });
    void client.request('wait').catch(() => undefined);
    await waitFor(() => started === true);
    await a.close();
    await waitFor(() => aborted === true);
  });

  it('hands out a signal already aborted when it is first read after the close', async () => {
    const { server, a } = await pair();
    await a.close();
    await waitFor(() => server.closed === true);
    expect(server.signal.aborted).toBe(true);
    expect(server.signal.reason).toBeInstanceOf(ConnectionClosedError);
  });

  it('keeps the lazy signal through an interceptor that extends the base in place', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = new Peer<import('../src/peer.js').BaseContext & { tag: string }>(b, {
      interceptor: (_message, base, peer) => {
        expect(peer).toBe(server);
        return Object.assign(base, { tag: 'x' });
      },
    });
    const client = new Peer(a);
    await Promise.all([client.start(), server.start()]);
    let seen: AbortSignal | undefined;
    server.setRequestHandler('look', (_p, ctx) => {
      seen = ctx.signal;
      return ctx.tag;
    });
    await expect(client.request('look')).resolves.toBe('x');
    expect(seen).toBe(server.signal);
    expect(seen?.aborted).toBe(false);
  });

  it('makes no AbortController for a peer whose handlers never read the signal', async () => {
    let made = 0;
    const Native = globalThis.AbortController;
    vi.stubGlobal(
      'AbortController',
      class extends Native {
        constructor() {
          super();
          made++;
        }
      },
    );
    try {
      const { client, server } = await pair({ interceptor: (_m, base) => Object.assign(base, {}) });
      server.setRequestHandler('echo', (params) => params);
      await expect(client.request('echo', { a: 1 })).resolves.toEqual({ a: 1 });
      expect(made).toBe(0);
      expect(server.signal.aborted).toBe(false);
      expect(made).toBe(1);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('calls onClose once with the peer, after its signal aborted and before onclose', async () => {
    const order: string[] = [];
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server: Peer = new Peer(b, {
      onClose: (peer) => order.push(`onClose:${peer === server}:${peer.signal.aborted}`),
    });
    server.onclose = () => order.push('onclose');
    await server.start();
    await a.close();
    await waitFor(() => order.join() === 'onClose:true:true,onclose');
    await server.close();
    expect(order).toEqual(['onClose:true:true', 'onclose']);
  });
});

describe('answers from other implementations', () => {
  it('settles a request answered with neither result nor error (wmp-js: result undefined) as null', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const peer = new Peer(a);
    await peer.start();
    b.onmessage = (frame) => {
      const { id, method } = JSON.parse(String(frame)) as { id?: string; method?: string };
      if (method !== undefined) a.receiveRaw(JSON.stringify({ jsonrpc: '2.0', id }));
    };
    await b.start();
    await expect(peer.request('wmp.session.close', {}, { timeoutMs: 2000 })).resolves.toBeNull();
    // Anything else of that shape is still refused (-32600 to null).
    const sent: string[] = [];
    b.onmessage = (frame) => sent.push(String(frame));
    a.receiveRaw(JSON.stringify({ jsonrpc: '2.0', id: 'not-ours' }));
    await expect.poll(() => sent.length).toBe(1);
    expect(JSON.parse(sent[0]!)).toMatchObject({ id: null, error: { code: -32600 } });
  });
});
