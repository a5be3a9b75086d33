// Issue 23, item 4: an HTTP session token still worked after logout. After `DELETE /wmp` answered
// 204, the same token opened an event stream (200) and a POST of `wmp.capability.list` was
// answered. A session that is closed or logged out is dead on every binding at once: its HTTP
// token, its event streams and its resumption token stop working in the same operation, on every
// node of a cluster.
import { generateKeypair } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCoordinationHub } from '../../src/coordination/memory/coordination.js';
import { createRelay, MemoryRelayStores, type Relay, type RelayStores } from '../../src/node.js';
import {
  type HttpAnswer,
  hostileTestbed,
  httpLogin,
  type Login,
  openEventStream,
  post,
  rpc,
  VERSION,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const SESSION_NOT_FOUND = -31000;

type HttpLogin = Login & { headers: Record<string, string> };

const del = (url: string, headers: Record<string, string>) => fetch(`${url}/wmp`, { method: 'DELETE', headers });
const events = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/wmp/events`, { headers: { ...headers, accept: 'text/event-stream' } });
const capabilities = (url: string, login: HttpLogin): Promise<HttpAnswer> =>
  post(url, rpc('wmp.capability.list', { wmp: login.wmp }), login.headers);
const resume = (url: string, login: HttpLogin): Promise<HttpAnswer> =>
  post(
    url,
    rpc('wmp.session.resume', {
      wmp: { version: VERSION, sender: login.did },
      session_id: login.sessionId,
      resumption_token: login.token,
    }),
  );

/**
 * Resolves once `stream` ended, well before anything else could have ended it (a connection left
 * without an authenticated session is closed after 30 s).
 */
async function endsSoon(stream: { readonly ended: Promise<void> }): Promise<void> {
  let ended = false;
  void stream.ended.then(() => {
    ended = true;
  });
  await expect.poll(() => ended, { timeout: 5_000 }).toBe(true);
}

/** Every way of using the session again fails: its token (POST, stream) and its resumption token. */
async function expectDead(url: string, login: HttpLogin): Promise<void> {
  const stream = await events(url, login.headers);
  expect(stream.status).toBe(404);
  await stream.body?.cancel();
  expect((await capabilities(url, login)).body.error.code).toBe(SESSION_NOT_FOUND);
  expect((await resume(url, login)).body.error.code).toBe(SESSION_NOT_FOUND);
}

describe('logging out of an HTTP session (issue 23 item 4)', { timeout: 60_000 }, () => {
  it('DELETE /wmp ends the session: its token, its event stream and its resumption token die with it', async () => {
    const bed = await testbed.setup();
    const login = await httpLogin(bed.url);
    const stream = await openEventStream(bed.url, login.headers);
    expect((await capabilities(bed.url, login)).body.result).toBeDefined();

    expect((await del(bed.url, login.headers)).status).toBe(204);
    await expectDead(bed.url, login);
    await endsSoon(stream); // the server ended it
    expect(await bed.relay.stores.sessions.get(login.sessionId)).toBeUndefined();
    await bed.checkHealthy();
  });

  it('wmp.session.close over HTTP does the same, and its own answer still arrives', async () => {
    const bed = await testbed.setup();
    const login = await httpLogin(bed.url);
    const stream = await openEventStream(bed.url, login.headers);
    const closed = await post(
      bed.url,
      rpc('wmp.session.close', { wmp: login.wmp, reason: 'user_cancelled' }),
      login.headers,
    );
    expect(closed).toMatchObject({ status: 200, body: { result: {} } });
    await expectDead(bed.url, login);
    await endsSoon(stream);
    await bed.checkHealthy();
  });

  it('a DELETE with a wrong token changes nothing', async () => {
    const bed = await testbed.setup();
    const login = await httpLogin(bed.url);
    const forged = { ...login.headers, 'wmp-session-token': `${login.headers['wmp-session-token']!.slice(0, -2)}xx` };
    expect((await del(bed.url, forged)).status).toBe(401);
    expect((await capabilities(bed.url, login)).body.result).toBeDefined();
  });
});

describe('logging out on one node of a cluster', { timeout: 60_000 }, () => {
  const nodes: Relay[] = [];
  const stores: MemoryRelayStores[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
    for (const store of stores.splice(0)) await store.close();
  });

  /** Nodes of one relay in one process: one store and one coordination hub between them. */
  async function cluster(n: number): Promise<string[]> {
    const hub = new MemoryCoordinationHub();
    const store = new MemoryRelayStores();
    stores.push(store);
    const { queue, box, sessions, keyPackages, groups, evidence } = store;
    const shared: RelayStores = { queue, box, sessions, keyPackages, groups, evidence, close: async () => {} };
    const identity = { seed: generateKeypair().exportSeed() };
    const urls: string[] = [];
    for (let i = 0; i < n; i++) {
      const node = createRelay({ identity, store: shared, coordination: hub.node(`node-${i}`) });
      nodes.push(node);
      urls.push((await node.listen()).url);
    }
    return urls;
  }

  it('ends the event stream another node holds, and no node takes the token again', async () => {
    const [a, b, c] = (await cluster(3)) as [string, string, string];
    const login = await httpLogin(a);
    expect((await post(a, rpc('wmp.relay.register', { wmp: login.wmp }), login.headers)).body.result).toBeDefined();
    // Its event stream on node b (carried there by its token).
    const stream = await openEventStream(b, login.headers);

    expect((await del(a, login.headers)).status).toBe(204);
    await endsSoon(stream); // node b heard of it
    for (const url of [b, c, a]) await expectDead(url, login);
  });

  it('a logout on the node that carries the stream ends the HTTP session the first node still holds', async () => {
    const [a, b] = (await cluster(2)) as [string, string];
    const login = await httpLogin(a);
    const stream = await openEventStream(b, login.headers);
    expect((await del(b, login.headers)).status).toBe(204);
    await endsSoon(stream);
    // Node a still held the HTTP session that made the session (never registered: no note reached it).
    await expectDead(a, login);
  });
});
