// Issue 12, item 2: the session store filled without logging in. Session opens are rate-limited
// per connection and per source before anything is stored, the per-connection cap is checked
// before saving, unauthenticated sessions live shortly and have their own cap, and a full store
// is -31007 (never -32603) and shows on /health.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import {
  authenticateRequest,
  createRequest,
  health,
  hostileTestbed,
  metric,
  RawSocket,
  type RpcAnswer,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();

const creates = (n: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: n }, () => createRequest(generateKeypair().did, extra));
const ok = (answers: readonly RpcAnswer[]) => answers.filter((a) => a.result !== undefined).length;
const pending = (url: string) => metric(url, 'wmp_relay_pending_sessions');

describe('the session store under a flood of creates (issue 12 item 2)', { timeout: 60_000 }, () => {
  it('rate-limits creates per connection and per source address before storing anything', async () => {
    const bed = await testbed.setup(
      { limits: { sessionOpensPerSecond: 1, sessionOpenBurst: 4, maxSessionsPerConnection: 64 } },
      { frozenClock: true },
    );
    const before = await pending(bed.url);
    const perConnection: number[] = [];
    for (let i = 0; i < 5; i++) {
      const socket = await RawSocket.open(bed.url);
      const answers = await socket.batch(creates(10));
      for (const a of answers.filter((x) => x.error)) {
        expect(a.error).toMatchObject({ code: -31007, data: { reason: 'session open rate' } });
      }
      perConnection.push(ok(answers));
    }
    // One connection: its burst. The loopback source: four times that, shared by its connections.
    expect(perConnection[0]).toBe(4);
    expect(perConnection.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(16);
    expect(perConnection[4]).toBe(0);
    // What was refused left nothing behind.
    expect((await pending(bed.url)) - before).toBe(perConnection.reduce((a, b) => a + b, 0));
    expect(await metric(bed.url, 'wmp_relay_refusals_total{cause="session_open_rate"}')).toBe(
      50 - (await pending(bed.url)) + before,
    );
    await bed.checkHealthy();
  });

  it('checks the per-connection cap before a session is saved', async () => {
    const bed = await testbed.setup({ limits: { maxSessionsPerConnection: 3, sessionOpenBurst: 100 } });
    const before = await pending(bed.url);
    const socket = await RawSocket.open(bed.url);
    const answers = await socket.batch(creates(8));
    expect(ok(answers)).toBe(3);
    for (const a of answers.filter((x) => x.error)) {
      expect(a.error).toMatchObject({ code: -31007, data: { reason: 'too many sessions on this connection' } });
    }
    expect((await pending(bed.url)) - before).toBe(3);
    await bed.checkHealthy();
  });

  it('gives unauthenticated sessions their own cap and a short life; a full store is -31007 and degraded', async () => {
    const bed = await testbed.setup(
      {
        limits: { maxPendingSessions: 4, maxSessions: 100, sessionOpenBurst: 100 },
        timings: { pendingSessionTtlSeconds: 2, sweepIntervalMs: 100 },
      },
      { frozenClock: true },
    );
    const socket = await RawSocket.open(bed.url);
    const held = await socket.batch(creates(4));
    expect(ok(held)).toBe(4);
    const refused = await socket.call('wmp.session.create', createRequest(generateKeypair().did).params);
    expect(refused.error).toMatchObject({ code: -31007, data: { reason: 'too many unauthenticated sessions' } });
    expect(await health(bed.url)).toMatchObject({ status: 200, body: { status: 'degraded', sessions: 'full' } });
    // Nobody can start a login while the pending cap is reached...
    const other = await RawSocket.open(bed.url);
    const blocked = await other.call('wmp.session.create', createRequest(generateKeypair().did).params);
    expect(blocked.error?.code).toBe(-31007);

    // ...until the unauthenticated sessions' short life is over: then they are gone for good.
    bed.clock.advance(2_500);
    const late = held[0]!.result;
    const keypair = generateKeypair();
    const auth = await authenticateRequest(keypair, late.wmp.session_id, late.challenge);
    expect((await socket.call(auth.method, auth.params)).error?.code).toBeOneOf([-31000, -31001, -31002]);
    await waitFor(async () => (await pending(bed.url)) === 0, 15_000, 'the pending sessions to be swept');
    expect((await health(bed.url)).body).toMatchObject({ status: 'ok', sessions: 'ok' });
    await other.login();
    await bed.checkHealthy();
  });

  it('answers a create beyond maxSessions with -31007 (never -32603) and says so on /health', async () => {
    const bed = await testbed.setup(
      { limits: { maxSessions: 8, sessionOpenBurst: 100 }, timings: { sweepIntervalMs: 100 } },
      { frozenClock: true },
    );
    const socket = await RawSocket.open(bed.url);
    let refusal: RpcAnswer['error'];
    for (let i = 0; i < 20 && refusal === undefined; i++) {
      // Short-lived sessions, so that the store frees itself once the attack stops.
      const created = await socket.call('wmp.session.create', createRequest(generateKeypair().did, { ttl: 2 }).params);
      refusal = created.error;
    }
    expect(refusal).toMatchObject({ code: -31007, data: { reason: 'session store full' } });
    expect(await metric(bed.url, 'wmp_relay_sessions')).toBe(8);
    expect(await health(bed.url)).toMatchObject({ status: 200, body: { status: 'degraded', sessions: 'full' } });
    expect(await metric(bed.url, 'wmp_relay_errors_total{code="-32603"}')).toBe(0);

    bed.clock.advance(3_000);
    await waitFor(async () => (await health(bed.url)).body.status === 'ok', 15_000, 'the store to free itself');
    await bed.checkHealthy();
  });
});
