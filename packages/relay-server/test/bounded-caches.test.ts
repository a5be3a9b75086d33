// The bounds of the relay's in-memory caches, kept by `BoundedMap`: what goes first when full.
import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../src/coordination/memory/token-buckets.js';
import { ResolutionCache } from '../src/relay/federation/home-resolver.js';

describe('TokenBuckets at maxKeys', () => {
  it('forgets a refilled bucket first, else the least recently used, and never holds more than maxKeys', () => {
    const now = 0;
    const buckets = new TokenBuckets({ perSecond: 0.001, burst: 2, maxKeys: 3, now: () => now });
    expect(buckets.take('b', 2)).toBe(true); // drained
    expect(buckets.take('a', 0)).toBe(true); // full: the default state, free to forget
    expect(buckets.take('c', 2)).toBe(true); // drained
    expect(buckets.take('d', 2)).toBe(true);
    expect(buckets.size).toBe(3);
    // `a` went, not `b` (the least recently used, but drained): b is still empty.
    expect(buckets.take('b', 1)).toBe(false);
    // Now all are drained: a new key drops the least recently used, `c`, which comes back full.
    expect(buckets.take('e', 2)).toBe(true);
    expect(buckets.size).toBe(3);
    expect(buckets.take('c', 2)).toBe(true);
    expect(buckets.size).toBe(3);
    expect(buckets.take('b', 1)).toBe(false);
  });
});

describe('TokenBuckets of keys gone quiet', () => {
  it('forgets the buckets that refilled as later takes pass, and limits them as before', () => {
    let now = 0;
    const buckets = new TokenBuckets({ perSecond: 1, burst: 2, now: () => now });
    for (const key of ['a', 'b', 'c']) expect(buckets.take(key, 2)).toBe(true);
    expect(buckets.size).toBe(3);
    now = 1000; // half refilled: kept, and still limiting
    expect(buckets.take('d')).toBe(true);
    expect(buckets.size).toBe(4);
    expect(buckets.take('a', 2)).toBe(false);
    now = 3000; // b and c refilled (a was touched at 1000 and is full at 3000 too)
    expect(buckets.take('e')).toBe(true);
    expect(buckets.size).toBeLessThan(4);
    now = 10_000;
    expect(buckets.take('f')).toBe(true);
    expect(buckets.take('g')).toBe(true);
    expect(buckets.take('h')).toBe(true);
    // Only the buckets not yet refilled are held: the last three.
    expect(buckets.size).toBe(3);
    // A forgotten bucket starts full, as it would have been.
    expect(buckets.take('b', 2)).toBe(true);
    expect(buckets.take('b')).toBe(false);
  });
});

describe('ResolutionCache at its bound', () => {
  const answer = (home: string) => async () => ({ home, source: 'test', relays: [home] });

  it('drops the oldest answer first; a hit does not move it', async () => {
    const cache = new ResolutionCache(60_000, 2, () => 0);
    await cache.get('x', answer('https://x.example'));
    await cache.get('y', answer('https://y.example'));
    await cache.get('x', answer('unused')); // a hit: no new answer, order unchanged
    await cache.get('z', answer('https://z.example'));
    expect(cache.peek('x')).toBeUndefined();
    expect(cache.peek('y')?.home).toBe('https://y.example');
    expect(cache.peek('z')?.home).toBe('https://z.example');
  });

  it('keeps one answer at a bound below one', async () => {
    const cache = new ResolutionCache(60_000, 0, () => 0);
    await cache.get('x', answer('https://x.example'));
    await cache.get('y', answer('https://y.example'));
    expect(cache.peek('x')).toBeUndefined();
    expect(cache.peek('y')?.home).toBe('https://y.example');
  });
});
