// Issue 23, item 9: with PostgreSQL down, `wmp.message.deliver` and `wmp.session.create` answered
// a bare -32603 (as for a bug). They answer a typed refusal now, -31007 with
// `data.reason: "store_unavailable"` and a retry hint, and work again once the server is back.
import { generateKeypair } from '@wmp/jcs-signing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '../../../test-support/services/index.js';
import { MemoryCoordinationHub } from '../src/coordination/memory/coordination.js';
import { createRelay, type Relay, STORE_RETRY_AFTER_SECONDS } from '../src/node.js';
import { PostgresStore, postgresBoxStore } from '../src/postgres.js';
import { createRequest, httpLogin, post, RawSocket, rpc } from './fixtures/hostile-client.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres({ name: 'down-answers' });
}, 60_000);
afterAll(() => server?.destroy());

const STORE_UNAVAILABLE = {
  code: -31007,
  message: 'Rate limited',
  data: { reason: 'store_unavailable', retry_after: STORE_RETRY_AFTER_SECONDS },
};

describe('a relay whose PostgreSQL is down', { timeout: 60_000 }, () => {
  it('answers deliver and session.create with -31007 store_unavailable, and serves again once it is back', async () => {
    const url = await server.createDatabase('down');
    const store = await PostgresStore.open({ url, poolSize: 2, connectTimeoutMs: 2000, boxStore: postgresBoxStore });
    const relay: Relay = createRelay({ store });
    const sockets: RawSocket[] = [];
    try {
      const { url: relayUrl } = await relay.listen();
      const open = async () => {
        const socket = await RawSocket.open(relayUrl);
        sockets.push(socket);
        return socket;
      };
      const alice = await open();
      const login = await alice.login();
      const bob = generateKeypair().did;
      expect((await alice.deliver(login, [bob], { n: 1 })).result).toBeDefined();

      await server.stop({ mode: 'immediate' });
      const refused = await alice.deliver(login, [bob], { n: 2 });
      expect(refused.error).toEqual(STORE_UNAVAILABLE);
      const stranger = await open();
      const create = createRequest(generateKeypair().did);
      expect((await stranger.call(create.method, create.params)).error).toEqual(STORE_UNAVAILABLE);

      await server.start();
      // The same session goes on: nothing was stored for the refused calls, and a retry works.
      await expect
        .poll(async () => (await alice.deliver(login, [bob], { n: 2 })).result, { timeout: 30_000 })
        .toBeDefined();
      expect((await stranger.call(create.method, create.params)).result?.wmp?.session_id).toMatch(/^ses-/);
    } finally {
      for (const socket of sockets) await socket.close();
      await relay.close();
    }
  });

  it('over HTTP on another node of a cluster, answers -31007 too, never "session not found"', async () => {
    const url = await server.createDatabase('down-cluster');
    const hub = new MemoryCoordinationHub();
    const identity = { seed: generateKeypair().exportSeed() };
    const nodes: Relay[] = [];
    const stores: PostgresStore[] = [];
    try {
      const urls: string[] = [];
      for (const id of ['node-a', 'node-b']) {
        const store = await PostgresStore.open({
          url,
          poolSize: 2,
          connectTimeoutMs: 2000,
          boxStore: postgresBoxStore,
        });
        stores.push(store);
        const node = createRelay({ identity, store, coordination: hub.node(id) });
        nodes.push(node);
        urls.push((await node.listen()).url);
      }
      const [a, b] = urls as [string, string];
      const login = await httpLogin(a);
      await server.stop({ mode: 'immediate' });
      // Node b does not hold this HTTP session: it would take it from the store, which is down.
      const deliver = rpc('wmp.message.deliver', { wmp: login.wmp, to: [generateKeypair().did], body: 'x' });
      const answer = await post(b, deliver, login.headers);
      expect(answer).toMatchObject({
        status: 200,
        body: { error: { code: -31007, data: { reason: 'store_unavailable' } } },
      });
      const stream = await fetch(`${b}/wmp/events`, { headers: { ...login.headers, accept: 'text/event-stream' } });
      expect(stream.status).toBe(503);
      expect(stream.headers.get('retry-after')).toBe('5');
      await stream.body?.cancel();
      await server.start();
      await expect
        .poll(async () => (await post(b, deliver, login.headers)).body.result, { timeout: 30_000 })
        .toBeDefined();
    } finally {
      for (const node of nodes) await node.close();
      for (const store of stores) await store.close().catch(() => undefined);
    }
  });
});
