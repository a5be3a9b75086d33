import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeypair } from '@wmp/jcs-signing';
import { type Connection, Peer, type SessionRecord, WmpServer, WmpSession } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { waitFor } from '../../../test-support/wait-for.js';
import { attachWebSocketServer, ReconnectPolicy, reconnect, WebSocketClientTransport } from '../src/node.js';

/**
 * An application on top of WmpServer that pushes numbered messages into a session and keeps them,
 * so a resumed connection gets what it missed: the shape a relay's queue has (issue 5 makes it durable).
 */
function mailboxServer() {
  const log = new Map<string, { id: string; params: Record<string, unknown> }[]>();
  const server = new WmpServer({
    hooks: {
      resume(session: SessionRecord, _identity, lastReceivedId, connection: Connection) {
        const entries = log.get(session.id) ?? [];
        const from = lastReceivedId === undefined ? 0 : entries.findIndex((e) => e.id === lastReceivedId) + 1;
        const missed = entries.slice(from);
        // After the resume reply: the client learns its token first, then gets the backlog, in order.
        setTimeout(() => {
          for (const m of missed) void connection.peer.notify('wmp.message.deliver', m.params, session.id);
        }, 0);
        return missed.length;
      },
    },
  });
  const push = async (session: SessionRecord | { id: string }, n: number) => {
    const id = `msg-${n}`;
    const params = { wmp: { version: '0.1', session_id: session.id, message_id: id }, to: [], body: { n } };
    const entries = log.get(session.id) ?? [];
    entries.push({ id, params });
    log.set(session.id, entries);
    for (const c of server.connectionsOf(session.id))
      await c.peer.notify('wmp.message.deliver', params, session.id).catch(() => undefined);
  };
  return { server, push };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function listen(server: WmpServer) {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const ws = attachWebSocketServer(http, { path: '/wmp', onTransport: (t) => void server.connect(t) });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  cleanups.push(async () => {
    await ws.close();
    await new Promise<void>((r) => http.close(() => r()));
  });
  return { url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}/wmp`, ws };
}

async function connectPeer(url: string): Promise<Peer> {
  const peer = new Peer(new WebSocketClientTransport({ url, WebSocket: WebSocket as never }));
  await peer.start();
  cleanups.push(() => peer.close());
  return peer;
}

describe('reconnect and resume over WebSocket', () => {
  it('a killed socket is resumed, and what was sent meanwhile arrives once, in order', async () => {
    const { server, push } = mailboxServer();
    const { url, ws } = await listen(server);
    const session = await WmpSession.open(await connectPeer(url), {
      signer: generateKeypair(),
      capabilities: { messaging: {} },
    });
    const got: number[] = [];
    session.on('message', (p) => got.push((p.body as { n: number }).n));

    for (const n of [1, 2, 3]) await push(session, n);
    await waitFor(() => got.length === 3);

    // Kill the connection on the server side, mid-session.
    const closed = new Promise<void>((r) => {
      session.peer.onclose = () => r();
    });
    for (const client of ws.wss.clients) client.terminate();
    await closed;
    for (const n of [4, 5, 6]) await push(session, n);

    const attempts: number[] = [];
    const policy = new ReconnectPolicy({ initialDelayMs: 5, maxDelayMs: 20, maxAttempts: 5 });
    const missed = await reconnect(async ({ attempt }) => {
      attempts.push(attempt);
      return session.resume(await connectPeer(url));
    }, policy);
    expect(missed).toBe(3);
    await waitFor(() => got.length >= 6);
    expect(session.lastReceivedId).toBe('msg-6');

    // The session goes on: new messages arrive live (and a replayed one twice would have come
    // before this one), and requests work.
    await push(session, 7);
    await waitFor(() => got.includes(7));
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7]);
    await expect(session.request('wmp.capability.list')).resolves.toMatchObject({ capabilities: { messaging: {} } });
  });

  it('retries while the server is unreachable, then gives up with ReconnectFailedError', async () => {
    const policy = new ReconnectPolicy({ initialDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 });
    let tries = 0;
    await expect(
      reconnect(async () => {
        tries++;
        return connectPeer('ws://127.0.0.1:9/wmp');
      }, policy),
    ).rejects.toMatchObject({ name: 'ReconnectFailedError', attempts: 3 });
    expect(tries).toBe(3);
  });
});
