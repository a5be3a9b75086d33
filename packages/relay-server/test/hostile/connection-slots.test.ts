// Issue 12, item 3: connection slots used up without logging in. A connection or HTTP session
// with no authenticated session is closed after the timeout, unauthenticated ones have their own
// cap, and a refused connection is told so in its binding's terms: WebSocket 1013, HTTP 503 with a
// JSON-RPC error carrying the request's id.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import {
  createRequest,
  health,
  hostileTestbed,
  idleSockets,
  metric,
  post,
  RawSocket,
  unsignedCreate,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const did = () => generateKeypair().did;

const unauthenticated = (url: string) => metric(url, 'wmp_relay_unauthenticated_connections');
const connections = (url: string) => metric(url, 'wmp_relay_connections');

describe('connection slots (issue 12 item 3)', { timeout: 60_000 }, () => {
  it('closes a WebSocket that never logs in after the timeout, and keeps the one that did', async () => {
    const bed = await testbed.setup({ timings: { unauthenticatedTimeoutMs: 1000 } });
    const [idle] = await idleSockets(bed.url, 1);
    const talker = await RawSocket.open(bed.url);
    const login = await talker.login();
    // Closed by the relay (policy), without having sent a byte.
    expect((await idle!.closed).code).toBe(1008);
    await waitFor(async () => (await unauthenticated(bed.url)) === 0, 15_000, 'the slot to be given back');
    // The logged-in connection outlived the timeout and still works.
    expect(talker.isClosed).toBe(false);
    expect((await talker.call('wmp.relay.register', { wmp: login.wmp })).result).toMatchObject({ registered: true });
    await bed.checkHealthy();
  });

  it('ends an HTTP session opened by an unsigned create after the timeout', async () => {
    const bed = await testbed.setup({ timings: { unauthenticatedTimeoutMs: 1000 } });
    const base = await connections(bed.url);
    const answers = await Promise.all(Array.from({ length: 5 }, () => unsignedCreate(bed.url)));
    for (const a of answers) expect(a.status).toBe(200);
    expect(await connections(bed.url)).toBe(base + 5);
    await waitFor(async () => (await connections(bed.url)) === base, 15_000, 'the HTTP sessions to be closed');
    // The session a create opened is gone with it.
    const gone = answers[0]!;
    const again = await post(
      bed.url,
      {
        jsonrpc: '2.0',
        id: 'after',
        method: 'wmp.capability.list',
        params: { wmp: { version: '0.1', session_id: gone.body.result.wmp.session_id } },
      },
      {
        'wmp-session-id': gone.headers.get('wmp-session-id')!,
        'wmp-session-token': gone.headers.get('wmp-session-token')!,
      },
    );
    // Gone with it: not found, or (a new HTTP session for the request) not bound to it. The
    // status is the binding's business; the JSON-RPC error is what counts.
    expect(again.body).toMatchObject({ id: 'after' });
    expect(again.body.error?.code).toBeOneOf([-31000, -31002]);
    await bed.checkHealthy();
  });

  it('caps unauthenticated connections: WebSocket 1013, HTTP 503 with the request id, /health degraded', async () => {
    const bed = await testbed.setup({ limits: { maxUnauthenticatedConnections: 3 } });
    const held = await idleSockets(bed.url, 3);
    await waitFor(async () => (await unauthenticated(bed.url)) === 3, 15_000, 'three unauthenticated connections');
    expect(await health(bed.url)).toMatchObject({ status: 200, body: { status: 'degraded', connections: 'full' } });

    // A fourth WebSocket is accepted at the HTTP level and closed at once as overloaded.
    const refused = await RawSocket.open(bed.url);
    expect((await refused.closed).code).toBe(1013);
    // An HTTP create is answered 503 with a JSON-RPC error for its own request id, and a batch for each of its ids.
    const single = await post(bed.url, createRequest(did(), {}, 'open-1'));
    expect(single.status).toBe(503);
    expect(single.headers.get('retry-after')).not.toBeNull();
    expect(single.body).toMatchObject({ jsonrpc: '2.0', id: 'open-1', error: { code: -31007 } });
    const batch = await post(bed.url, [createRequest(did(), {}, 'b-1'), createRequest(did(), {}, 'b-2')]);
    expect(batch.status).toBe(503);
    expect(batch.body.map((a: { id: string }) => a.id)).toEqual(['b-1', 'b-2']);
    expect(await metric(bed.url, 'wmp_relay_refusals_total{cause="unauthenticated_slots"}')).toBeGreaterThanOrEqual(3);

    // One of the held connections logs in: its slot is no longer an unauthenticated one.
    await held[0]!.login();
    await waitFor(async () => (await unauthenticated(bed.url)) === 2, 15_000, 'the slot to be freed');
    const next = await RawSocket.open(bed.url);
    expect(await next.call('wmp.session.create', createRequest(did()).params)).toMatchObject({ result: {} });
    for (const s of held) await s.close();
    await next.close();
    // Refused connections were never counted as open ones (nothing is left of them).
    await waitFor(async () => (await connections(bed.url)) === 0, 15_000, 'every connection to be gone from the count');
    await bed.checkHealthy();
  });

  it('caps all connections (maxConnections): the next WebSocket upgrade and HTTP create get 503', async () => {
    const bed = await testbed.setup({ limits: { maxConnections: 4 } });
    const held: RawSocket[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await RawSocket.open(bed.url);
      await s.login();
      held.push(s);
    }
    await waitFor(async () => (await connections(bed.url)) === 4, 15_000, 'four connections');
    // Refused at the upgrade already (503), before any WebSocket exists.
    await expect(RawSocket.open(bed.url)).rejects.toThrow('upgrade refused: 503');
    expect((await post(bed.url, createRequest(did(), {}, 'full-1'))).body).toMatchObject({
      id: 'full-1',
      error: { code: -31007 },
    });
    expect(await metric(bed.url, 'wmp_relay_refusals_total{cause="connection_slots"}')).toBeGreaterThanOrEqual(1);
    await held[0]!.close();
    await waitFor(async () => (await connections(bed.url)) === 3, 15_000, 'a free slot');
    await bed.checkHealthy();
  });
});
