import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { generateKeypair } from '@wmp/jcs-signing';
import { MemorySessionStore, Peer, type SessionStore, WmpServer, WmpSession } from '@wmp/session';
import { afterAll, describe, expect, it } from 'vitest';
import { createHttpBinding, HttpClientTransport, keyedSessionTokens, type SessionTokens } from '../src/node.js';

// Nodes of a cluster share the session store and the token key, not their HTTP sessions: a
// request another node's HTTP session began is carried on whichever node it reaches.

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface Node {
  readonly endpoint: string;
  readonly server: WmpServer;
  readonly senders: Array<string | undefined>;
}

async function node(store: SessionStore, sessionTokens: SessionTokens): Promise<Node> {
  const senders: Array<string | undefined> = [];
  let n = 0;
  const server = new WmpServer({
    store,
    capabilities: { messaging: {} },
    hooks: {
      deliver(_params, ctx) {
        senders.push(ctx.sender);
        return { message_id: `m-${++n}`, status: 'delivered' };
      },
    },
  });
  const binding = createHttpBinding({
    sessionTokens,
    onTransport: async (t, _request, context) => {
      const connection = await server.connect(t);
      if (context?.adopt !== undefined) await server.adopt(connection, context.adopt);
    },
  });
  const http = serve({ fetch: binding.app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise((r) => http.once('listening', r));
  cleanups.push(async () => {
    await binding.close();
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  });
  return { endpoint: `http://127.0.0.1:${(http.address() as AddressInfo).port}/wmp`, server, senders };
}

/** Posts one JSON-RPC request to `endpoint` as the given HTTP session; the reply's status and body. */
async function post(endpoint: string, sessionId: string, token: string, method: string, params: object) {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'wmp-session-id': sessionId, 'wmp-session-token': token },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { wmp: { version: '0.1', session_id: sessionId }, ...params },
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('keyed session tokens', () => {
  const tokens = keyedSessionTokens(randomBytes(32));

  it('are checked by any holder of the key, for their session only', () => {
    const a = tokens.issue('sess-1');
    const b = tokens.issue('sess-1');
    expect(a).not.toBe(b);
    expect(tokens.verify('sess-1', a) && tokens.verify('sess-1', b)).toBe(true);
    expect(keyedSessionTokens(randomBytes(32)).verify('sess-1', a)).toBe(false);
    expect(tokens.verify('sess-2', a)).toBe(false);
    expect(tokens.verify('sess-1', `${a.slice(0, -1)}${a.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(tokens.verify('sess-1', a.slice(1))).toBe(false);
    expect(tokens.verify('sess-1', 'x'.repeat(4096))).toBe(false);
  });

  it('need a key of at least 32 bytes', () => {
    expect(() => keyedSessionTokens(randomBytes(16))).toThrow(RangeError);
  });
});

describe('an HTTP session begun on another node', () => {
  it('is carried, bound to its identity, with its event stream, where the token key is shared', async () => {
    const store = new MemorySessionStore();
    const key = randomBytes(32);
    const a = await node(store, keyedSessionTokens(key));
    const b = await node(store, keyedSessionTokens(key));
    const stranger = await node(store, keyedSessionTokens(randomBytes(32)));

    const alice = generateKeypair();
    const toA = new HttpClientTransport({ endpoint: a.endpoint });
    const peerA = new Peer(toA);
    await peerA.start();
    const session = await WmpSession.open(peerA, { signer: alice, capabilities: { messaging: {} } });
    const token = toA.sessionToken;
    expect(token).toMatch(/^t1\./);

    // Node B has never seen this HTTP session: the token proves it, and the sender is bound.
    const sent = await post(b.endpoint, session.id, token!, 'wmp.message.deliver', { to: [alice.did], body: 'x' });
    expect(sent.status).toBe(200);
    expect(sent.body.result).toMatchObject({ status: 'delivered' });
    expect(b.senders).toEqual([alice.did]);

    // Its event stream on B carries what B's server sends to the session.
    const toB = new HttpClientTransport({
      endpoint: b.endpoint,
      sessionId: session.id,
      sessionToken: token!,
      events: true,
    });
    const frames: string[] = [];
    toB.onmessage = (f) => frames.push(typeof f === 'string' ? f : new TextDecoder().decode(f));
    await toB.start();
    await expect.poll(() => b.server.connectionsOf(session.id).length).toBeGreaterThan(0);
    await b.server.notifySession(session.id, 'wmp.test.note', {});
    await expect.poll(() => frames.some((f) => f.includes('wmp.test.note'))).toBe(true);
    await toB.close();

    // A node with another key, a token for another session: no such session (-31000).
    const elsewhere = await post(stranger.endpoint, session.id, token!, 'wmp.message.deliver', { to: [], body: 'x' });
    expect(elsewhere).toMatchObject({ body: { error: { code: -31000 } } });
    const otherPeer = new Peer(new HttpClientTransport({ endpoint: a.endpoint }));
    await otherPeer.start();
    const other = await WmpSession.open(otherPeer, { signer: generateKeypair(), capabilities: { messaging: {} } });
    const borrowed = await post(b.endpoint, other.id, token!, 'wmp.message.deliver', {
      to: [],
      body: 'x',
    });
    expect(borrowed).toMatchObject({ body: { error: { code: -31000 } } });
    expect(b.senders).toEqual([alice.did]);

    // Once the session is closed, its token carries nothing anywhere.
    await session.close();
    await expect.poll(async () => (await store.get(session.id))?.state ?? 'gone').not.toBe('active');
    const late = await post(b.endpoint, session.id, token!, 'wmp.message.deliver', { to: [alice.did], body: 'y' });
    expect(late).toMatchObject({ body: { error: { code: -31000 } } });
    await peerA.close();
    await otherPeer.close();
  }, 20_000);
});
