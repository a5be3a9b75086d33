import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Peer } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { waitFor } from '../../../test-support/wait-for.js';
import {
  attachWebSocketServer,
  createHttpBinding,
  HttpClientTransport,
  WebSocketClientTransport,
} from '../src/node.js';

// The bindings under the session engine's real Peer (not WmpServer): answers routed by
// relatedRequestId, batches answered as one array, -32700 with id null, server notifications.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function serverPeer(peers: Peer[]) {
  return async (transport: ConstructorParameters<typeof Peer>[0]) => {
    const peer = new Peer(transport);
    peer.setRequestHandler('wmp.session.create', () => ({ wmp: { version: '0.1', session_id: 'ses-xyz' } }));
    peer.setRequestHandler('echo', (params, ctx) => ({ params, sessionId: ctx.extra?.sessionId ?? null }));
    peers.push(peer);
    await peer.start();
  };
}

async function listen(
  fetchApp: (r: Request) => Response | Promise<Response>,
): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const s = serve({ fetch: fetchApp, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ server: s as Server, port: info.port }),
    );
  });
}

describe('bindings under the real Peer', () => {
  it('HTTP: requests, batches, parse errors and server notifications', async () => {
    const peers: Peer[] = [];
    const binding = createHttpBinding({ onTransport: serverPeer(peers) });
    const { server, port } = await listen(binding.app.fetch);
    cleanups.push(async () => {
      await binding.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const endpoint = `http://127.0.0.1:${port}/wmp`;
    const transport = new HttpClientTransport({ endpoint });
    const client = new Peer(transport);
    const notes: unknown[] = [];
    client.setNotificationHandler('wmp.message.deliver', (params) => {
      notes.push(params);
    });
    await client.start();
    cleanups.push(() => client.close());

    await expect(client.request('wmp.session.create', { wmp: { version: '0.1' } })).resolves.toMatchObject({
      wmp: { session_id: 'ses-xyz' },
    });
    expect(transport.sessionId).toBe('ses-xyz');
    await expect(client.request('echo', { a: 1 })).resolves.toEqual({ params: { a: 1 }, sessionId: 'ses-xyz' });

    const auth = { 'Wmp-Session-Id': 'ses-xyz', 'Wmp-Session-Token': transport.sessionToken! };
    const post = (body: string) =>
      fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json', ...auth }, body });
    const parseError = await post('{"jsonrpc":');
    expect(parseError.status).toBe(200);
    expect(await parseError.json()).toMatchObject({ id: null, error: { code: -32700 } });
    const batch = await post(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'echo', params: {} },
        { jsonrpc: '2.0', method: 'ignored' },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
        { foo: 1 },
      ]),
    );
    const answers = (await batch.json()) as Array<{ id: unknown; error?: { code: number } }>;
    expect(answers.map((a) => [a.id, a.error?.code])).toEqual([
      [1, undefined],
      [2, -32601],
      [null, -32600],
    ]);
    const empty = await post('[]');
    expect(await empty.json()).toMatchObject({ id: null, error: { code: -32600 } });

    await waitFor(() => peers.length === 1);
    await peers[0]!.notify('wmp.message.deliver', { n: 1 });
    await waitFor(() => notes.length === 1);
    expect(notes[0]).toEqual({ n: 1 });
  });

  it('WebSocket: requests both ways', async () => {
    const peers: Peer[] = [];
    const { server, port } = await listen(() => new Response(null, { status: 404 }));
    const attachment = attachWebSocketServer(server, { onTransport: serverPeer(peers) });
    cleanups.push(async () => {
      await attachment.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const client = new Peer(new WebSocketClientTransport({ url: `ws://127.0.0.1:${port}/wmp`, WebSocket }));
    client.setRequestHandler('echo', (params) => ({ back: params }));
    await client.start();
    cleanups.push(() => client.close());
    await expect(client.request('echo', { a: 1 })).resolves.toEqual({ params: { a: 1 }, sessionId: null });
    await waitFor(() => peers.length === 1);
    await expect(peers[0]!.request('echo', { b: 2 })).resolves.toEqual({ back: { b: 2 } });
  });

  // go-wmp posts every message without `Wmp-Session-Id` (a request names its session in
  // `params.wmp.session_id`): its answers to the server's requests name no session at all. They
  // reach the HTTP session the request went to, by the request's id, with that session's proof.
  it.each([
    ['by session id alone (the weaker binding)', { allowSessionIdOnly: true }, (_token: string) => ({})],
    ['with the session token', {}, (token: string) => ({ Authorization: `Bearer ${token}` })],
  ])(
    'HTTP: an answer to a server request posted with no session header reaches it (%s)',
    async (_n, options, proof) => {
      const peers: Peer[] = [];
      const binding = createHttpBinding({ onTransport: serverPeer(peers), ...options });
      const { server, port } = await listen(binding.app.fetch);
      cleanups.push(async () => {
        await binding.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      });
      const endpoint = `http://127.0.0.1:${port}/wmp`;
      const transport = new HttpClientTransport({ endpoint, events: true });
      const client = new Peer(transport);
      const asked: Array<{ id: string | number }> = [];
      client.divert = (m) => {
        if (!('method' in m) || m.method !== 'ask' || !('id' in m)) return false;
        asked.push({ id: m.id });
        return true;
      };
      await client.start();
      cleanups.push(() => client.close());
      await client.request('wmp.session.create', { wmp: { version: '0.1' } });
      await waitFor(() => peers.length === 1);
      const token = transport.sessionToken!;
      const post = (body: unknown, headers: Record<string, string>) =>
        fetch(endpoint, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });

      const answered = peers[0]!.request('ask', {});
      answered.catch(() => undefined);
      await waitFor(() => asked.length === 1);
      const id = asked[0]!.id;
      // A wrong token is refused, and nothing reaches the server.
      const wrong = await post({ jsonrpc: '2.0', id, result: { no: 1 } }, { 'Wmp-Session-Token': 'nope' });
      expect(wrong.status).toBe(401);
      // An id the server never asked about reaches no session (a new, empty one): 202, nothing settles.
      expect((await post({ jsonrpc: '2.0', id: 'req-never', result: {} }, proof(token))).status).toBe(202);
      const right = await post({ jsonrpc: '2.0', id, result: { yes: 1 } }, proof(token));
      expect(right.status).toBe(202);
      await expect(answered).resolves.toEqual({ yes: 1 });
    },
  );
});
