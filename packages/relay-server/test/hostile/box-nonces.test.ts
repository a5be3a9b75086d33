// Issue 12, item 5: box request replay after a nonce flood. A request refused by the rate limit
// records no nonce, an unexpired nonce is never evicted (a full cache answers 503 unavailable),
// and each key holds at most a share of the cache; so a captured request stays a replay.
import { generateKeypair } from '@wmp/jcs-signing';
import { MemoryNonceCache } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { BOX_API_PREFIX } from '../../src/node.js';
import { flood, hostileTestbed, sendBoxRequest, signBoxRequest } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const ALLOW = `${BOX_API_PREFIX}/allow`;

describe('box nonces under a flood (issue 12 item 5)', { timeout: 60_000 }, () => {
  it('records no nonce for a request refused 429, so a captured request is still a replay after the flood', async () => {
    const bed = await testbed.setup({}, { box: { directory: false } });
    // Small enough that the flood would push the victim's nonce out if refused requests were recorded.
    const nonces = new MemoryNonceCache({ maxEntries: 100, maxPerKey: 50 });
    bed.mountBox({ nonces, rateLimit: { perSecond: 0.001, burst: 8 } });

    const victim = generateKeypair();
    const captured = await signBoxRequest(victim, bed.url, 'GET', ALLOW);
    expect((await sendBoxRequest(bed.url, captured)).status).toBe(200);

    const attacker = generateKeypair();
    const answers = await flood(200, async () =>
      sendBoxRequest(bed.url, await signBoxRequest(attacker, bed.url, 'GET', ALLOW)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(statuses.filter((s) => s === 429)).toHaveLength(192);
    for (const a of answers.filter((x) => x.status === 429)) expect(a.body.error.code).toBe('rate_limited');
    // The victim's nonce and the attacker's eight admitted ones: nothing of the 192 refused.
    expect(nonces.size).toBe(9);

    const replay = await sendBoxRequest(bed.url, captured);
    expect(replay).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    await bed.checkHealthy();
  });

  it('answers 503 unavailable when the cache (or a key’s share of it) is full, and never forgets a live nonce', async () => {
    const bed = await testbed.setup({}, { box: { directory: false } });
    const nonces = new MemoryNonceCache({ maxEntries: 12, maxPerKey: 4 });
    bed.mountBox({ nonces, rateLimit: { perSecond: 0.001, burst: 100 } });

    const keys = [generateKeypair(), generateKeypair(), generateKeypair()];
    const first = await signBoxRequest(keys[0]!, bed.url, 'GET', ALLOW);
    expect((await sendBoxRequest(bed.url, first)).status).toBe(200);
    for (const [i, key] of keys.entries()) {
      for (let n = i === 0 ? 1 : 0; n < 4; n++) {
        expect((await sendBoxRequest(bed.url, await signBoxRequest(key, bed.url, 'GET', ALLOW))).status).toBe(200);
      }
    }
    expect(nonces.size).toBe(12);
    // A key past its share, and a fresh key once the cache is full: 503, nothing evicted.
    const overShare = await sendBoxRequest(bed.url, await signBoxRequest(keys[0]!, bed.url, 'GET', ALLOW));
    expect(overShare).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    const fresh = await sendBoxRequest(bed.url, await signBoxRequest(generateKeypair(), bed.url, 'GET', ALLOW));
    expect(fresh).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    expect(nonces.size).toBe(12);
    expect(await sendBoxRequest(bed.url, first)).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized' } },
    });
    await bed.checkHealthy();
  });
});
