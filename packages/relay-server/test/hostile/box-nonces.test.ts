// Issue 12, item 5: box request replay after a nonce flood. A request refused by the rate limit
// records no nonce, an unexpired nonce is never evicted (a full cache answers 503 unavailable),
// and each key holds at most a share of the cache; so a captured request stays a replay.
// Issue 23, item 7: throwaway keys (no card, no events, no allow list) filled the 200,000-entry
// cache in 99 s and every signed request got 503 for ten minutes. A key the box holds nothing of
// records no nonce on a call that changes nothing, each source holds only a share of the cache,
// and every route is limited per source.
import { generateKeypair, type Keypair } from '@wmp/jcs-signing';
import { MemoryNonceCache } from '@wmp/ohan-seal';
import { describe, expect, it } from 'vitest';
import { BOX_API_PREFIX } from '../../src/node.js';
import { flood, hostileTestbed, sendBoxRequest, signBoxRequest } from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const ALLOW = `${BOX_API_PREFIX}/allow`;
const LIMITS = `${BOX_API_PREFIX}/limits`;

/** Gives `key` an allow list (the box holds something of it then): one signed PUT. */
async function known(url: string, key: Keypair, headers: Record<string, string> = {}) {
  return sendBoxRequest(
    url,
    await signBoxRequest(key, url, 'PUT', ALLOW, { contacts: [generateKeypair().multikey] }),
    headers,
  );
}

/** A request from `address`, as the proxy in front of the relay says (`X-Forwarded-For`). */
const from = (address: string) => ({ 'x-forwarded-for': address });

describe('box nonces under a flood (issue 12 item 5)', { timeout: 60_000 }, () => {
  it('records no nonce for a request refused 429, so a captured request is still a replay after the flood', async () => {
    const bed = await testbed.setup({}, { box: { directory: false } });
    // Small enough that the flood would push the victim's nonce out if refused requests were recorded.
    const nonces = new MemoryNonceCache({ maxEntries: 100, maxPerKey: 50, maxPerSource: 100 });
    // The key's rate is what is under test here: the source's is out of the way.
    bed.mountBox({ nonces, rateLimit: { perSecond: 0.001, burst: 8 }, sourceRateLimit: false });

    // Both keys have an allow list: the box holds something of them, so their nonces count.
    const victim = generateKeypair();
    expect((await known(bed.url, victim)).status).toBe(200);
    const captured = await signBoxRequest(victim, bed.url, 'GET', ALLOW);
    expect((await sendBoxRequest(bed.url, captured)).status).toBe(200);

    const attacker = generateKeypair();
    expect((await known(bed.url, attacker)).status).toBe(200);
    const answers = await flood(200, async () =>
      sendBoxRequest(bed.url, await signBoxRequest(attacker, bed.url, 'GET', ALLOW)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(193);
    for (const a of answers.filter((x) => x.status === 429)) expect(a.body.error.code).toBe('rate_limited');
    // The victim's two nonces and the attacker's eight admitted ones: nothing of the 193 refused.
    expect(nonces.size).toBe(10);

    const replay = await sendBoxRequest(bed.url, captured);
    expect(replay).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    await bed.checkHealthy();
  });

  it('answers 503 unavailable when the cache (or a key’s share of it) is full, and never forgets a live nonce', async () => {
    const bed = await testbed.setup({}, { box: { directory: false } });
    const nonces = new MemoryNonceCache({ maxEntries: 12, maxPerKey: 4, maxPerSource: 12 });
    bed.mountBox({ nonces, rateLimit: { perSecond: 0.001, burst: 100 }, sourceRateLimit: false });

    const keys = [generateKeypair(), generateKeypair(), generateKeypair()];
    // Each key's allow list is its first nonce (the box holds something of it from then on).
    for (const key of keys) expect((await known(bed.url, key)).status).toBe(200);
    const first = await signBoxRequest(keys[0]!, bed.url, 'GET', ALLOW);
    expect((await sendBoxRequest(bed.url, first)).status).toBe(200);
    for (const [i, key] of keys.entries()) {
      for (let n = i === 0 ? 2 : 1; n < 4; n++) {
        expect((await sendBoxRequest(bed.url, await signBoxRequest(key, bed.url, 'GET', ALLOW))).status).toBe(200);
      }
    }
    expect(nonces.size).toBe(12);
    // A key past its share, and a fresh key once the cache is full: 503, nothing evicted.
    const overShare = await sendBoxRequest(bed.url, await signBoxRequest(keys[0]!, bed.url, 'GET', ALLOW));
    expect(overShare).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    const fresh = await known(bed.url, generateKeypair());
    expect(fresh).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    expect(nonces.size).toBe(12);
    expect(await sendBoxRequest(bed.url, first)).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized' } },
    });
    await bed.checkHealthy();
  });
});

describe('box nonces against throwaway keys (issue 23 item 7)', { timeout: 60_000 }, () => {
  it('records no nonce for a key the box holds nothing of, so a flood of them leaves room for everyone', async () => {
    const bed = await testbed.setup({}, { box: { directory: false } });
    const nonces = new MemoryNonceCache({ maxEntries: 20, maxPerKey: 10, maxPerSource: 20 });
    bed.mountBox({ nonces, sourceRateLimit: false });
    // 100 keys with no card, no events, no allow list: more than the whole cache holds.
    const answers = await flood(100, async () =>
      sendBoxRequest(bed.url, await signBoxRequest(generateKeypair(), bed.url, 'GET', ALLOW)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
    for (const a of answers) expect(a.body).toEqual({ contacts: [] });
    expect(nonces.size).toBe(0);
    // Fetches and delivered marks of such keys record nothing either.
    const stranger = generateKeypair();
    for (const request of [
      await signBoxRequest(stranger, bed.url, 'GET', `${BOX_API_PREFIX}/events?after=0&limit=10`),
      await signBoxRequest(stranger, bed.url, 'POST', `${BOX_API_PREFIX}/delivered`, { ids: ['x'] }),
    ]) {
      expect((await sendBoxRequest(bed.url, request)).status).toBe(200);
    }
    expect(nonces.size).toBe(0);

    // A key the box holds something of: recorded, and its replay refused.
    const bob = generateKeypair();
    expect((await known(bed.url, bob)).status).toBe(200);
    const captured = await signBoxRequest(bob, bed.url, 'GET', ALLOW);
    expect((await sendBoxRequest(bed.url, captured)).status).toBe(200);
    expect(nonces.size).toBe(2);
    expect(await sendBoxRequest(bed.url, captured)).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized' } },
    });
    await bed.checkHealthy();
  });

  it('gives each source a share of the cache: one place full of known keys leaves room for the others', async () => {
    // The relay trusts the proxy on loopback: sources are what its X-Forwarded-For says.
    const bed = await testbed.setup({ trustedProxies: ['127.0.0.1'] }, { box: { directory: false } });
    const nonces = new MemoryNonceCache({ maxEntries: 100, maxPerKey: 10, maxPerSource: 5 });
    bed.mountBox({ nonces, sourceRateLimit: false });
    const mallory = from('203.0.113.66');
    // Fresh keys made known one by one (an allow list each: a call that always records).
    for (let i = 0; i < 5; i++) expect((await known(bed.url, generateKeypair(), mallory)).status).toBe(200);
    const refused = await known(bed.url, generateKeypair(), mallory);
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    expect(nonces.size).toBe(5);
    // Everyone else still gets through, and so does a key of mallory's own place that needs no room.
    expect((await known(bed.url, generateKeypair(), from('198.51.100.7'))).status).toBe(200);
    expect(
      (await sendBoxRequest(bed.url, await signBoxRequest(generateKeypair(), bed.url, 'GET', ALLOW), mallory)).status,
    ).toBe(200);
    await bed.checkHealthy();
  });

  it('limits every route per source: a fresh key per request is still one source', async () => {
    const bed = await testbed.setup({ trustedProxies: ['127.0.0.1'] }, { box: { directory: false } });
    bed.mountBox({ rateLimit: { perSecond: 0.001, burst: 100 }, sourceRateLimit: { perSecond: 0.001, burst: 10 } });
    const mallory = from('203.0.113.66');
    const answers = await flood(30, async () =>
      sendBoxRequest(bed.url, await signBoxRequest(generateKeypair(), bed.url, 'GET', ALLOW), mallory),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    for (const a of answers.filter((x) => x.status !== 200))
      expect(a).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    // Unsigned routes too, before any work; another source is apart.
    expect((await fetch(`${bed.url}${LIMITS}`, { headers: mallory })).status).toBe(429);
    expect((await fetch(`${bed.url}${LIMITS}`, { headers: from('198.51.100.7') })).status).toBe(200);
    await bed.checkHealthy();
  });
});
