import { type NonceCache, NonceCacheFullError } from '@wmp/ohan-seal';
import { ReplayCacheFullError } from '@wmp/session';
import { afterEach, describe, expect, it } from 'vitest';
import { isCoordinationUnavailable } from '../contracts/errors.js';
import { Clusters, type CoordinationFactory, until } from './harness.js';

const TTL = 300; // seconds, as the box uses

/** Whether a fresh nonce was recorded (false: no room now). */
async function recorded(cache: NonceCache, nonce: string, ttlSeconds: number, key: string): Promise<boolean> {
  try {
    return !(await cache.seen(nonce, ttlSeconds, key));
  } catch (error) {
    if (error instanceof NonceCacheFullError) return false;
    throw error;
  }
}

/** `NonceCache.seen` as a promise (the memory cache answers, and throws, synchronously). */
const seen = async (cache: NonceCache, nonce: string, ttlSeconds: number, key?: string, source?: string) =>
  cache.seen(nonce, ttlSeconds, key, source);
let n = 0;
const fresh = (what = 'n') => `${what}-${++n}-${Math.random().toString(36).slice(2)}`;

/**
 * The adapter suite of `Coordination.nonces` (ohan-seal's `NonceCache`): check and record in one
 * step, across nodes; a key's share and the total bound refuse (`NonceCacheFullError`) and never
 * evict an unexpired nonce; an expired nonce frees its room.
 */
export function nonceCacheSuite(name: string, factory: CoordinationFactory): void {
  describe(`NonceCache: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('records a nonce once: first false, then true; another nonce is apart', async () => {
      const node = await (await clusters.open()).node('n');
      const key = fresh('key');
      const nonce = fresh();
      expect(await seen(node.nonces, nonce, TTL, key)).toBe(false);
      expect(await seen(node.nonces, nonce, TTL, key)).toBe(true);
      expect(await seen(node.nonces, fresh(), TTL, key)).toBe(false);
      const keyless = fresh();
      expect(await seen(node.nonces, keyless, TTL)).toBe(false);
      expect(await seen(node.nonces, keyless, TTL)).toBe(true);
    });

    it('a nonce recorded on one node is seen on the other (a replay against another node is refused)', async () => {
      const { a, b } = await clusters.two();
      const key = fresh('key');
      const nonce = fresh();
      expect(await seen(a.nonces, nonce, TTL, key)).toBe(false);
      expect(await seen(b.nonces, nonce, TTL, key)).toBe(true);
    });

    it('refuses beyond a key’s share without recording, and keeps every unexpired nonce', async () => {
      const node = await (await clusters.open({ nonces: { maxEntries: 100, maxPerKey: 3 } })).node('n');
      const key = fresh('key');
      const nonces = [fresh(), fresh(), fresh()];
      for (const nonce of nonces) expect(await seen(node.nonces, nonce, TTL, key)).toBe(false);
      const extra = fresh();
      await expect(seen(node.nonces, extra, TTL, key)).rejects.toBeInstanceOf(NonceCacheFullError);
      // Nothing was recorded: the same nonce is refused again rather than seen.
      await expect(seen(node.nonces, extra, TTL, key)).rejects.toBeInstanceOf(NonceCacheFullError);
      for (const nonce of nonces) expect(await seen(node.nonces, nonce, TTL, key)).toBe(true);
      expect(await seen(node.nonces, fresh(), TTL, fresh('other'))).toBe(false);
    });

    it('refuses beyond a source’s share whatever the keys, across nodes, without recording', async () => {
      // Throwaway keys from one place (issue 23 item 7): each key far below its share, the source not.
      const { a, b } = await clusters.two({ nonces: { maxEntries: 100, maxPerKey: 50, maxPerSource: 4 } });
      const source = fresh('203.0.113');
      for (let i = 0; i < 4; i++)
        expect(await seen(i % 2 ? a.nonces : b.nonces, fresh(), TTL, fresh('key'), source)).toBe(false);
      const extra = fresh();
      const key = fresh('key');
      await expect(seen(a.nonces, extra, TTL, key, source)).rejects.toBeInstanceOf(NonceCacheFullError);
      await expect(seen(b.nonces, extra, TTL, key, source)).rejects.toBeInstanceOf(NonceCacheFullError);
      // Another source, the same key, a request with no source: all still recorded.
      expect(await seen(a.nonces, extra, TTL, key, fresh('198.51.100'))).toBe(false);
      expect(await seen(b.nonces, fresh(), TTL, key)).toBe(false);
    });

    it('frees a source’s share as its nonces expire', async () => {
      const node = await (await clusters.open({ nonces: { maxEntries: 100, maxPerSource: 1 } })).node('n');
      const source = fresh('203.0.113');
      expect(await seen(node.nonces, fresh(), 0.2, fresh('key'), source)).toBe(false);
      await expect(seen(node.nonces, fresh(), TTL, fresh('key'), source)).rejects.toBeInstanceOf(NonceCacheFullError);
      await until('room for the source again', async () => {
        try {
          return !(await seen(node.nonces, fresh(), TTL, fresh('key'), source));
        } catch (error) {
          if (error instanceof NonceCacheFullError) return false;
          throw error;
        }
      });
    });

    it('refuses beyond the total, all keys together, with a typed error that is not an outage', async () => {
      const { a, b } = await clusters.two({ nonces: { maxEntries: 4, maxPerKey: 2 } });
      const [k1, k2] = [fresh('key'), fresh('key')];
      expect(await seen(a.nonces, fresh(), TTL, k1)).toBe(false);
      expect(await seen(b.nonces, fresh(), TTL, k1)).toBe(false);
      expect(await seen(a.nonces, fresh(), TTL, k2)).toBe(false);
      expect(await seen(b.nonces, fresh(), TTL, k2)).toBe(false);
      const error = await seen(b.nonces, fresh(), TTL, fresh('key')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NonceCacheFullError);
      expect(isCoordinationUnavailable(error)).toBe(false);
    });

    it('forgets a nonce after its TTL, which frees its room; an unexpired one stays', async () => {
      const node = await (await clusters.open({ nonces: { maxEntries: 100, maxPerKey: 2 } })).node('n');
      const key = fresh('key');
      const [short, long] = [fresh(), fresh()];
      expect(await seen(node.nonces, short, 0.2, key)).toBe(false);
      expect(await seen(node.nonces, long, TTL, key)).toBe(false);
      await expect(seen(node.nonces, fresh(), TTL, key)).rejects.toBeInstanceOf(NonceCacheFullError);
      await until('room for the key again', () => recorded(node.nonces, fresh(), TTL, key));
      expect(await seen(node.nonces, long, TTL, key)).toBe(true);
      // The expired nonce is not remembered: it would be recorded again, and the share is full.
      await expect(seen(node.nonces, short, TTL, key)).rejects.toBeInstanceOf(NonceCacheFullError);
    });

    it('frees the total after expiry too', async () => {
      const node = await (await clusters.open({ nonces: { maxEntries: 2, maxPerKey: 2 } })).node('n');
      expect(await seen(node.nonces, fresh(), 0.2, fresh('key'))).toBe(false);
      expect(await seen(node.nonces, fresh(), 0.2, fresh('key'))).toBe(false);
      await expect(seen(node.nonces, fresh(), 0.2, fresh('key'))).rejects.toBeInstanceOf(NonceCacheFullError);
      await until('room again', () => recorded(node.nonces, fresh(), 0.2, fresh('key')));
    });

    it('is atomic: the same nonce sent to two nodes at once is fresh exactly once', async () => {
      const { a, b } = await clusters.two();
      const key = fresh('key');
      const nonce = fresh();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => seen((i % 2 ? a : b).nonces, nonce, TTL, key)),
      );
      expect(results.filter((seen) => !seen)).toHaveLength(1);
    });
  });
}

/**
 * The adapter suite of `Coordination.replays` (@wmp/session's `ReplayCache`): `useOnce` across
 * nodes, expiry, the total bound (`ReplayCacheFullError`, no eviction).
 */
export function replayCacheSuite(name: string, factory: CoordinationFactory): void {
  describe(`ReplayCache: ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('is fresh once, on any node', async () => {
      const { a, b } = await clusters.two();
      const jti = fresh('jti');
      const at = Date.now() + 60_000;
      expect(await a.replays.useOnce(jti, at)).toBe(true);
      expect(await a.replays.useOnce(jti, at)).toBe(false);
      expect(await b.replays.useOnce(jti, at)).toBe(false);
      expect(await b.replays.useOnce(fresh('jti'), at)).toBe(true);
    });

    it('does not remember what has already expired', async () => {
      const node = await (await clusters.open()).node('n');
      const jti = fresh('jti');
      expect(await node.replays.useOnce(jti, Date.now() - 1000)).toBe(true);
      expect(await node.replays.useOnce(jti, Date.now() - 1000)).toBe(true);
      expect(await node.replays.useOnce(jti, Date.now() + 60_000)).toBe(true);
      expect(await node.replays.useOnce(jti, Date.now() - 1000)).toBe(false);
    });

    it('keeps peer statuses (statusClaims) apart: once across nodes, and their own bound', async () => {
      const cluster = await clusters.open({ statusClaims: { maxEntries: 2 }, replays: { maxEntries: 2 } });
      const [a, b] = [await cluster.node('a'), await cluster.node('b')];
      const at = Date.now() + 60_000;
      const key = fresh('status');
      expect(await a.statusClaims.useOnce(key, at)).toBe(true);
      expect(await b.statusClaims.useOnce(key, at)).toBe(false);
      expect(await b.statusClaims.useOnce(fresh('status'), at)).toBe(true);
      await expect(a.statusClaims.useOnce(fresh('status'), at)).rejects.toBeInstanceOf(ReplayCacheFullError);
      // Full of statuses, the replay cache (DPoP) still takes entries, the same key included.
      expect(await a.replays.useOnce(key, at)).toBe(true);
      expect(await b.replays.useOnce(fresh('jti'), at)).toBe(true);
    });

    it('refuses when full rather than forget an unexpired entry; a used entry is still used', async () => {
      const node = await (await clusters.open({ replays: { maxEntries: 3 } })).node('n');
      const at = Date.now() + 60_000;
      const used = [fresh('jti'), fresh('jti'), fresh('jti')];
      for (const jti of used) expect(await node.replays.useOnce(jti, at)).toBe(true);
      const error = await node.replays.useOnce(fresh('jti'), at).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayCacheFullError);
      expect(isCoordinationUnavailable(error)).toBe(false);
      for (const jti of used) expect(await node.replays.useOnce(jti, at)).toBe(false);
    });

    it('forgets an entry after it expires', async () => {
      const node = await (await clusters.open({ replays: { maxEntries: 1 } })).node('n');
      const jti = fresh('jti');
      expect(await node.replays.useOnce(jti, Date.now() + 200)).toBe(true);
      await expect(node.replays.useOnce(fresh('jti'), Date.now() + 60_000)).rejects.toBeInstanceOf(
        ReplayCacheFullError,
      );
      // A count may lag an expiry by a moment (a full answer meanwhile); never the entry itself.
      await until('the entry to expire', () =>
        node.replays.useOnce(jti, Date.now() + 200).catch((e: unknown) => {
          if (!(e instanceof ReplayCacheFullError)) throw e;
          return false;
        }),
      );
    });

    it('is atomic: one jti used on two nodes at once is fresh exactly once', async () => {
      const { a, b } = await clusters.two();
      const jti = fresh('jti');
      const at = Date.now() + 60_000;
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).replays.useOnce(jti, at)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}
