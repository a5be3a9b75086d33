// Issue 28 (g): a source that sends faster than its read rate is not read until it may be again:
// its WebSocket frames wait in its own TCP buffers (no parsing, no dispatch, no answers), its HTTP
// requests get 429 before anything parses them, and every other source is served meanwhile.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test-support/wait-for.js';
import { createRequest, hostileTestbed, metric, RawSocket } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const KiB = 1024;
/** The flooding source, and an honest one beside it: two loopback addresses are two sources. */
const FLOODER = '127.0.0.2';
const HONEST = '127.0.0.3';

/** A POST of `body` to `/wmp` from `localAddress`, with its status, headers and text. */
function postFrom(
  url: string,
  localAddress: string,
  body: string,
): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/wmp`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('per-source read rate (issue 28 g)', { timeout: 60_000 }, () => {
  it('stops reading a flooding WebSocket source while another source is served, then reads the rest', async () => {
    const bed = await testbed.setup({
      limits: { sourceReadBytesPerSecond: 200 * KiB, sourceReadBurst: 16 * KiB },
    });
    const flooder = await RawSocket.open(bed.url, FLOODER);
    // 40 requests of 16 KiB: 640 KiB, more than three seconds of this source's rate.
    const pad = 'p'.repeat(16 * KiB);
    const ids = Array.from({ length: 40 }, (_, i) => `flood-${i}`);
    for (const id of ids) flooder.send({ jsonrpc: '2.0', id, method: 'wmp.capability.list', params: { pad } });

    // Another source logs in and is answered while the flood waits in its own buffers.
    const honest = await RawSocket.open(bed.url, HONEST);
    const login = await honest.login();
    expect((await honest.call('wmp.relay.register', { wmp: login.wmp })).result).toMatchObject({ registered: true });
    const answeredMeanwhile = ids.filter((id) => flooder.received.some((m) => m.id === id)).length;
    expect(answeredMeanwhile).toBeLessThan(ids.length);
    expect(await metric(bed.url, 'wmp_relay_source_read_waits_total')).toBeGreaterThan(0);

    // Slowed, not dropped: every request of the flood is answered in time, on the same connection.
    await waitFor(
      () => ids.every((id) => flooder.received.some((m) => m.id === id)),
      30_000,
      'the flood to be read at its rate',
    );
    expect(flooder.isClosed).toBe(false);
    await bed.checkHealthy();
  });

  it('answers 429 with Retry-After to an HTTP source over its rate, before reading its body; others are served', async () => {
    // A frozen clock: the flooder's budget does not refill during the test.
    const bed = await testbed.setup(
      { limits: { sourceReadBytesPerSecond: 10 * KiB, sourceReadBurst: 40 * KiB } },
      { frozenClock: true },
    );
    const body = JSON.stringify({ ...createRequest('did:key:z6Mkpad', {}, 'c'), pad: 'q'.repeat(12 * KiB) });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await postFrom(bed.url, FLOODER, body));
    // Three fit the burst (12.5 KiB each with the per-request cost); the fourth is refused unread.
    expect(answers.slice(0, 3).map((a) => a.status)).not.toContain(429);
    const refused = answers[3]!;
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.text)).toMatchObject({ error: { code: -31007, data: { reason: 'read rate' } } });

    // Another source is served as before.
    const other = await postFrom(bed.url, HONEST, body);
    expect(other.status).not.toBe(429);
    expect(await metric(bed.url, 'wmp_relay_source_read_waits_total')).toBeGreaterThan(0);
    await bed.checkHealthy();
  });
});
