import { type ReplayCache, ReplayCacheFullError, type ReplayCacheLimits, type ReplayScope } from '@wmp/jcs-signing';
import { afterEach, describe, expect, it } from 'vitest';
import type { Coordination, CoordinationLimits } from '../contracts/coordination.js';
import { isCoordinationUnavailable } from '../contracts/errors.js';
import { Clusters, type CoordinationFactory, until } from './harness.js';

/** The coordination's single-use caches: each one is a `ReplayCache` and passes the whole contract. */
const CACHES = ['nonces', 'replays', 'statusClaims'] as const;
type CacheName = (typeof CACHES)[number];

const LONG = 300_000; // ms: the box's and DPoP's order of magnitude
const SHORT = 1_500; // ms: expires within a test, yet outlives the few calls before it on a busy machine

let n = 0;
const fresh = (what = 'v') => `${what}-${++n}-${Math.random().toString(36).slice(2)}`;
const at = (ms: number) => Date.now() + ms;

/** Whether a fresh value was recorded (false: no room now). */
async function recorded(cache: ReplayCache, value: string, expiresAt: number, scope?: ReplayScope): Promise<boolean> {
  try {
    return await cache.useOnce(value, expiresAt, scope);
  } catch (error) {
    if (error instanceof ReplayCacheFullError && !isCoordinationUnavailable(error)) return false;
    throw error;
  }
}

/**
 * The adapter suite of the coordination's single-use caches (`nonces`, `replays`,
 * `statusClaims`: @wmp/jcs-signing's `ReplayCache`), each on its own: check and record in one
 * step across nodes; the total and the shares of a key and of a source refuse
 * (`ReplayCacheFullError`) and never evict an unexpired entry; an expired entry frees its room;
 * and the caches are apart (filling one leaves the others free).
 */
export function replayCacheSuite(name: string, factory: CoordinationFactory): void {
  for (const cache of CACHES) singleCacheSuite(name, factory, cache);
  describe(`ReplayCache: ${name}: the caches are apart`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('a full cache leaves the others free, the same value included', async () => {
      for (const full of CACHES) {
        const limits: CoordinationLimits = { [full]: { maxEntries: 2 } };
        const { a, b } = await clusters.two(limits);
        const value = fresh();
        expect(await a[full].useOnce(value, at(LONG))).toBe(true);
        expect(await b[full].useOnce(fresh(), at(LONG))).toBe(true);
        await expect(a[full].useOnce(fresh(), at(LONG))).rejects.toBeInstanceOf(ReplayCacheFullError);
        for (const other of CACHES.filter((c) => c !== full)) {
          expect(await a[other].useOnce(value, at(LONG))).toBe(true);
          expect(await b[other].useOnce(value, at(LONG))).toBe(false);
        }
      }
    });
  });
}

function singleCacheSuite(name: string, factory: CoordinationFactory, cache: CacheName): void {
  const of = (node: Coordination) => node[cache];
  const limited = (limits: ReplayCacheLimits): CoordinationLimits => ({ [cache]: limits });

  describe(`ReplayCache (${cache}): ${name}`, () => {
    const clusters = new Clusters(factory);
    afterEach(() => clusters.closeAll());

    it('is fresh once, then used; another value is apart; with or without a scope', async () => {
      const node = of(await (await clusters.open()).node('n'));
      const key = fresh('key');
      const value = fresh();
      expect(await node.useOnce(value, at(LONG), { key })).toBe(true);
      expect(await node.useOnce(value, at(LONG), { key })).toBe(false);
      // A value is used whatever scope it is asked with: the scope only counts shares.
      expect(await node.useOnce(value, at(LONG))).toBe(false);
      expect(await node.useOnce(fresh(), at(LONG), { key })).toBe(true);
      const bare = fresh();
      expect(await node.useOnce(bare, at(LONG))).toBe(true);
      expect(await node.useOnce(bare, at(LONG), { key, source: fresh('src') })).toBe(false);
    });

    it('a value used on one node is used on the other (a replay against another node is refused)', async () => {
      const { a, b } = await clusters.two();
      const value = fresh();
      expect(await of(a).useOnce(value, at(LONG), { key: 'k' })).toBe(true);
      expect(await of(b).useOnce(value, at(LONG), { key: 'k' })).toBe(false);
      expect(await of(b).useOnce(fresh(), at(LONG))).toBe(true);
    });

    it('does not remember what has already expired', async () => {
      const node = of(await (await clusters.open()).node('n'));
      const value = fresh();
      expect(await node.useOnce(value, Date.now() - 1000)).toBe(true);
      expect(await node.useOnce(value, Date.now() - 1000)).toBe(true);
      expect(await node.useOnce(value, at(LONG))).toBe(true);
      expect(await node.useOnce(value, Date.now() - 1000)).toBe(false);
    });

    it('refuses beyond a key’s share without recording, and keeps every unexpired entry', async () => {
      const node = of(await (await clusters.open(limited({ maxEntries: 100, maxPerKey: 3 }))).node('n'));
      const key = fresh('key');
      const used = [fresh(), fresh(), fresh()];
      for (const value of used) expect(await node.useOnce(value, at(LONG), { key })).toBe(true);
      const extra = fresh();
      await expect(node.useOnce(extra, at(LONG), { key })).rejects.toBeInstanceOf(ReplayCacheFullError);
      // Nothing was recorded: the same value is refused again rather than used.
      await expect(node.useOnce(extra, at(LONG), { key })).rejects.toBeInstanceOf(ReplayCacheFullError);
      for (const value of used) expect(await node.useOnce(value, at(LONG), { key })).toBe(false);
      expect(await node.useOnce(fresh(), at(LONG), { key: fresh('other') })).toBe(true);
      expect(await node.useOnce(extra, at(LONG))).toBe(true);
    });

    it('refuses beyond a source’s share whatever the keys, across nodes, without recording', async () => {
      // Throwaway keys from one place: each key far below its share, the source not.
      const { a, b } = await clusters.two(limited({ maxEntries: 100, maxPerKey: 50, maxPerSource: 4 }));
      const source = fresh('203.0.113');
      for (let i = 0; i < 4; i++)
        expect(await of(i % 2 ? a : b).useOnce(fresh(), at(LONG), { key: fresh('key'), source })).toBe(true);
      const extra = fresh();
      const key = fresh('key');
      await expect(of(a).useOnce(extra, at(LONG), { key, source })).rejects.toBeInstanceOf(ReplayCacheFullError);
      await expect(of(b).useOnce(extra, at(LONG), { key, source })).rejects.toBeInstanceOf(ReplayCacheFullError);
      // Another source, the same key, no source: all still recorded.
      expect(await of(a).useOnce(extra, at(LONG), { key, source: fresh('198.51.100') })).toBe(true);
      expect(await of(b).useOnce(fresh(), at(LONG), { key })).toBe(true);
    });

    it('frees a source’s share as its entries expire', async () => {
      const node = of(await (await clusters.open(limited({ maxEntries: 100, maxPerSource: 1 }))).node('n'));
      const source = fresh('203.0.113');
      expect(await node.useOnce(fresh(), at(SHORT), { key: fresh('key'), source })).toBe(true);
      await expect(node.useOnce(fresh(), at(LONG), { key: fresh('key'), source })).rejects.toBeInstanceOf(
        ReplayCacheFullError,
      );
      await until('room for the source again', () => recorded(node, fresh(), at(LONG), { key: fresh('key'), source }));
    });

    it('refuses beyond the total, all keys together, with a typed error that is not an outage', async () => {
      const { a, b } = await clusters.two(limited({ maxEntries: 4, maxPerKey: 2 }));
      const [k1, k2] = [fresh('key'), fresh('key')];
      const used = [fresh(), fresh(), fresh(), fresh()];
      expect(await of(a).useOnce(used[0]!, at(LONG), { key: k1 })).toBe(true);
      expect(await of(b).useOnce(used[1]!, at(LONG), { key: k1 })).toBe(true);
      expect(await of(a).useOnce(used[2]!, at(LONG), { key: k2 })).toBe(true);
      expect(await of(b).useOnce(used[3]!, at(LONG))).toBe(true);
      const error = await of(b)
        .useOnce(fresh(), at(LONG), { key: fresh('key') })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayCacheFullError);
      expect((error as ReplayCacheFullError).reason).toBe('replay_cache_full');
      expect(isCoordinationUnavailable(error)).toBe(false);
      await expect(of(a).useOnce(fresh(), at(LONG))).rejects.toBeInstanceOf(ReplayCacheFullError);
      for (const value of used) expect(await of(a).useOnce(value, at(LONG))).toBe(false);
    });

    it('forgets an entry after it expires, which frees its room; an unexpired one stays', async () => {
      const node = of(await (await clusters.open(limited({ maxEntries: 100, maxPerKey: 2 }))).node('n'));
      const key = fresh('key');
      const [short, long] = [fresh(), fresh()];
      expect(await node.useOnce(short, at(SHORT), { key })).toBe(true);
      expect(await node.useOnce(long, at(LONG), { key })).toBe(true);
      await expect(node.useOnce(fresh(), at(LONG), { key })).rejects.toBeInstanceOf(ReplayCacheFullError);
      await until('room for the key again', () => recorded(node, fresh(), at(LONG), { key }));
      expect(await node.useOnce(long, at(LONG), { key })).toBe(false);
      // The expired entry is not remembered: it would be recorded again, and the share is full.
      await expect(node.useOnce(short, at(LONG), { key })).rejects.toBeInstanceOf(ReplayCacheFullError);
    });

    it('frees the total after expiry too, whatever order the entries expire in', async () => {
      const node = of(await (await clusters.open(limited({ maxEntries: 2 }))).node('n'));
      const late = fresh();
      expect(await node.useOnce(late, at(LONG))).toBe(true);
      expect(await node.useOnce(fresh(), at(SHORT))).toBe(true);
      await expect(node.useOnce(fresh(), at(SHORT))).rejects.toBeInstanceOf(ReplayCacheFullError);
      await until('room again', () => recorded(node, fresh(), at(LONG)));
      expect(await node.useOnce(late, at(LONG))).toBe(false);
    });

    it('is atomic: one value used on two nodes at once is fresh exactly once', async () => {
      const { a, b } = await clusters.two();
      const value = fresh();
      const key = fresh('key');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => of(i % 2 ? a : b).useOnce(value, at(LONG), { key })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}
