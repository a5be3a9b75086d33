// Issue 12, item 7: memory with no total bound. Slow WebSocket readers are closed (1013) past their
// share or the relay's outbound budget, whether or not they read again; HTTP replay buffers share
// one budget; unauthenticated request bodies have a deadline (408), a budget (503) and a smaller
// size limit (413).
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import {
  createRequest,
  hostileTestbed,
  httpLogin,
  type Login,
  metric,
  must,
  openEventStream,
  post,
  RawSocket,
  rpc,
  slowPost,
  slowReader,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const KiB = 1024;
const MiB = 1024 * KiB;
/** Room for everything these tests route: only the memory bounds under test may refuse. */
const ROOMY = {
  routedBytesBurst: 256 * MiB,
  // These tests send tens of MiB from one address on purpose: the read rate is tested on its own.
  sourceReadBurst: 256 * MiB,
  maxQueueBytes: 256 * MiB,
  maxQueueBytesPerSender: 128 * MiB,
  maxFanoutBytes: 4 * MiB,
};
const budgetUsed = (url: string, name: string) => metric(url, `wmp_relay_budget_used_bytes{budget="${name}"}`);
const budgetRefusals = (url: string, name: string) => metric(url, `wmp_relay_budget_refusals_total{budget="${name}"}`);

/** Sends `count` messages of `bytes` from a fresh sender, round robin over `to`, each acknowledged. */
async function send(url: string, to: readonly string[], count: number, bytes: number): Promise<void> {
  const socket = await RawSocket.open(url);
  const login: Login = await socket.login();
  const body = 'm'.repeat(bytes);
  for (let i = 0; i < count; i++) must(await socket.deliver(login, [to[i % to.length]!], body));
  await socket.close();
}

describe('memory held for others (issue 12 item 7)', { timeout: 60_000 }, () => {
  it('closes a reader that stops reading once its unsent bytes pass its share (1013), even if it reads again', async () => {
    const bed = await testbed.setup({ limits: { ...ROOMY, maxBufferedBytesPerConnection: 256 * KiB } });
    const reader = await slowReader(bed.url);
    // 12 MB: more than the kernel's socket buffers hold, so the relay has to buffer the rest.
    await send(bed.url, [reader.login.did], 24, 500 * KiB);
    reader.socket.resume();
    expect((await reader.socket.closed).code).toBe(1013);
    await waitFor(async () => (await budgetUsed(bed.url, 'outbound')) === 0, 15_000, 'its buffer to be given back');
    await bed.checkHealthy();
  });

  it("closes slow readers (1013) once the relay's outbound budget is spent, below each one's own share", async () => {
    const bed = await testbed.setup({
      limits: { ...ROOMY, outboundBufferBytes: 1 * MiB, maxBufferedBytesPerConnection: 64 * MiB },
    });
    const readers = [await slowReader(bed.url), await slowReader(bed.url)];
    await send(
      bed.url,
      readers.map((r) => r.login.did),
      24,
      500 * KiB,
    );
    expect(await budgetRefusals(bed.url, 'outbound')).toBeGreaterThan(0);
    expect(await budgetUsed(bed.url, 'outbound')).toBeLessThanOrEqual(1 * MiB);
    for (const r of readers) r.socket.resume();
    const codes = await Promise.all(readers.map((r) => r.socket.closed.then((c) => c.code)));
    expect(codes).toContain(1013);
    await waitFor(async () => (await budgetUsed(bed.url, 'outbound')) === 0, 15_000, 'the budget to be given back');
    await bed.checkHealthy();
  });

  it('bounds the SSE replay buffers of HTTP sessions by one budget', async () => {
    const bed = await testbed.setup({ limits: { ...ROOMY, replayBufferChars: 64 * KiB } });
    const sessions = [];
    const streams: Awaited<ReturnType<typeof openEventStream>>[] = [];
    for (let i = 0; i < 4; i++) {
      const login = await httpLogin(bed.url);
      streams.push(await openEventStream(bed.url, login.headers));
      must((await post(bed.url, rpc('wmp.relay.register', { wmp: login.wmp }), login.headers)).body);
      sessions.push(login);
    }
    await send(
      bed.url,
      sessions.map((s) => s.did),
      40,
      20 * KiB,
    );
    // 800 KB went out on the four streams; each session would keep the last 4 MiB of it for
    // Last-Event-ID replay, the relay keeps 64 KiB in all.
    await waitFor(async () => (await budgetRefusals(bed.url, 'replay')) > 0, 15_000, 'the replay budget to refuse');
    expect(await budgetUsed(bed.url, 'replay')).toBeLessThanOrEqual(64 * KiB);
    await waitFor(() => streams.every((s) => s.bytes() > 10 * 20 * KiB), 15_000, 'the streams to carry the messages');
    for (const s of streams) await s.close();
    await bed.checkHealthy();
  });

  it('cuts off an unauthenticated POST whose body trickles in (408, body timeout)', async () => {
    const bed = await testbed.setup({ timings: { bodyTimeoutMs: 1000 } });
    const slow = slowPost(bed.url, { total: 30_000, first: 100, chunk: 10, everyMs: 100 });
    const answer = await slow.answer;
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    expect(slow.written()).toBeLessThan(30_000);
    slow.stop();
    await waitFor(async () => (await budgetUsed(bed.url, 'bodies')) === 0, 15_000, 'the body budget to be given back');
    await bed.checkHealthy();
  });

  it('refuses a body that does not fit in the budget of bodies in flight (503)', async () => {
    const bed = await testbed.setup({
      limits: { bodyBytesInFlight: 64 * KiB, maxUnauthenticatedBodyBytes: 60 * KiB },
    });
    const held = slowPost(bed.url, { total: 60_000, first: 40_000, chunk: 1, everyMs: 200 });
    await waitFor(async () => (await budgetUsed(bed.url, 'bodies')) >= 40_000, 15_000, 'the first body to be held');
    const second = slowPost(bed.url, { total: 60_000, first: 40_000, chunk: 1, everyMs: 200 });
    const refused = await second.answer;
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: -31007 } });
    second.stop();
    held.stop();
    await waitFor(async () => (await budgetUsed(bed.url, 'bodies')) === 0, 15_000, 'the held body to be given back');
    await bed.checkHealthy();
  });

  it('holds a POST that opens a session to the smaller pre-authentication limit (413), not a logged-in one', async () => {
    const bed = await testbed.setup({ limits: { maxUnauthenticatedBodyBytes: 32 * KiB } });
    const big = createRequest(generateKeypair().did, { pad: 'p'.repeat(40 * KiB) });
    expect((await post(bed.url, big)).status).toBe(413);
    // Chunked, with no length declared: cut off at the limit.
    const chunked = slowPost(bed.url, { total: 40 * KiB, first: 40 * KiB, declare: false });
    expect((await chunked.answer).status).toBe(413);
    chunked.stop();
    // Once logged in, the session's POSTs may be as large as any message.
    const login = await httpLogin(bed.url);
    const deliver = rpc('wmp.message.deliver', {
      wmp: login.wmp,
      to: [generateKeypair().did],
      content_type: 'application/json',
      body: 'b'.repeat(40 * KiB),
    });
    expect(must((await post(bed.url, deliver, login.headers)).body)).toMatchObject({ status: 'queued' });
    await bed.checkHealthy();
  });
});
