// The memory adapter of the one single-use cache on its own clock; the shared suite in
// @wmp/relay-server/testing runs the contract on it and on Redis across nodes.
import { describe, expect, it } from 'vitest';
import {
  MemoryReplayCache,
  ReplayCacheFullError,
  ReplayCacheUnavailableError,
  replayCacheBounds,
  replayCacheRefusalReason,
} from '../src/index.js';

const TTL = 600_000;

describe('MemoryReplayCache', () => {
  it('is fresh once until expiry, then forgets', async () => {
    let now = 0;
    const cache = new MemoryReplayCache({ now: () => now });
    expect(await cache.useOnce('a', now + TTL)).toBe(true);
    expect(await cache.useOnce('a', now + TTL)).toBe(false);
    now = TTL - 1;
    expect(await cache.useOnce('a', TTL)).toBe(false);
    now = TTL;
    expect(await cache.useOnce('a', now + TTL)).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('stays within its bound under a flood by refusing, never by forgetting an unexpired entry', async () => {
    let now = 0;
    const cache = new MemoryReplayCache({ maxEntries: 1000, now: () => now });
    for (let i = 0; i < 1000; i++) expect(await cache.useOnce(`n${i}`, TTL)).toBe(true);
    await expect(cache.useOnce('n1000', TTL)).rejects.toBeInstanceOf(ReplayCacheFullError);
    expect(cache.size).toBe(1000);
    // Every entry recorded is still known: a captured request cannot be used again after a flood.
    expect(await cache.useOnce('n0', TTL)).toBe(false);
    expect(await cache.useOnce('n999', TTL)).toBe(false);
    now = TTL;
    expect(await cache.useOnce('n1000', 2 * TTL)).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('frees the room of whichever entry expires first, whatever order they came in', async () => {
    let now = 1000;
    const cache = new MemoryReplayCache({ maxEntries: 3, now: () => now });
    expect(await cache.useOnce('late', 9000)).toBe(true);
    expect(await cache.useOnce('early', 2000)).toBe(true);
    expect(await cache.useOnce('middle', 5000)).toBe(true);
    await expect(cache.useOnce('d', 9000)).rejects.toBeInstanceOf(ReplayCacheFullError);
    now = 2000; // `early` has expired, behind `late` in arrival order
    expect(await cache.useOnce('d', 9000)).toBe(true);
    await expect(cache.useOnce('e', 9000)).rejects.toBeInstanceOf(ReplayCacheFullError);
    expect(await cache.useOnce('late', 9000)).toBe(false);
    expect(await cache.useOnce('middle', 9000)).toBe(false);
    now = 5000;
    expect(await cache.useOnce('middle', 9000)).toBe(true);
    expect(cache.size).toBe(3);
  });

  it('does not remember what has already expired', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 1, now: () => 5000 });
    expect(await cache.useOnce('a', 4000)).toBe(true);
    expect(await cache.useOnce('a', 5000)).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('gives each key only a share of the cache, so one caller cannot fill it for everyone', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 100, maxPerKey: 10, now: () => 0 });
    for (let i = 0; i < 10; i++) expect(await cache.useOnce(`m${i}`, TTL, { key: 'mallory' })).toBe(true);
    await expect(cache.useOnce('m10', TTL, { key: 'mallory' })).rejects.toBeInstanceOf(ReplayCacheFullError);
    expect(await cache.useOnce('a0', TTL, { key: 'alice' })).toBe(true);
    expect(cache.size).toBe(11);
  });

  it('gives each source only a share too, counted per entry whatever the key (issue 23 item 7)', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 100, maxPerKey: 100, maxPerSource: 10, now: () => 0 });
    const source = '203.0.113.7';
    // Throwaway keys from one address: each key is far below its share, the source is not.
    for (let i = 0; i < 10; i++) expect(await cache.useOnce(`s${i}`, TTL, { key: `key${i}`, source })).toBe(true);
    await expect(cache.useOnce('s10', TTL, { key: 'key10', source })).rejects.toBeInstanceOf(ReplayCacheFullError);
    // Nothing was recorded for the refused one; another source (and no scope at all) still go.
    await expect(cache.useOnce('s10', TTL, { key: 'key10', source })).rejects.toBeInstanceOf(ReplayCacheFullError);
    expect(await cache.useOnce('t0', TTL, { key: 'key0', source: '198.51.100.1' })).toBe(true);
    expect(await cache.useOnce('u0', TTL)).toBe(true);
    expect(cache.size).toBe(12);
  });

  it('frees a key’s and a source’s share as their entries expire', async () => {
    let now = 0;
    const cache = new MemoryReplayCache({ maxEntries: 100, maxPerKey: 1, maxPerSource: 2, now: () => now });
    expect(await cache.useOnce('a', 1000, { key: 'k1', source: 'src' })).toBe(true);
    expect(await cache.useOnce('b', TTL, { key: 'k2', source: 'src' })).toBe(true);
    await expect(cache.useOnce('c', TTL, { key: 'k3', source: 'src' })).rejects.toBeInstanceOf(ReplayCacheFullError);
    await expect(cache.useOnce('c', TTL, { key: 'k1' })).rejects.toBeInstanceOf(ReplayCacheFullError);
    now = 1000;
    expect(await cache.useOnce('c', TTL, { key: 'k1', source: 'src' })).toBe(true);
    await expect(cache.useOnce('d', TTL, { key: 'k4', source: 'src' })).rejects.toBeInstanceOf(ReplayCacheFullError);
  });

  it('fills in the default bounds: 200,000 in all, a key 1/16 of it, a source 1/8', () => {
    expect(replayCacheBounds()).toEqual({ maxEntries: 200_000, maxPerKey: 12_500, maxPerSource: 25_000 });
    expect(replayCacheBounds({ maxEntries: 8, maxPerSource: 3 })).toEqual({
      maxEntries: 8,
      maxPerKey: 1,
      maxPerSource: 3,
    });
  });
});

describe('replay cache refusals', () => {
  it('are one family: unavailable is full too, each with its stable code, reason and fixed message', () => {
    const full = new ReplayCacheFullError();
    const down = new ReplayCacheUnavailableError({ cause: new Error('ECONNREFUSED 10.0.0.7:6379') });
    expect(down).toBeInstanceOf(ReplayCacheFullError);
    expect([full.code, full.reason, full.message]).toEqual([
      'ERR_REPLAY_CACHE_FULL',
      'replay_cache_full',
      'replay cache full',
    ]);
    expect([down.code, down.reason, down.message]).toEqual([
      'ERR_REPLAY_CACHE_UNAVAILABLE',
      'replay_cache_unavailable',
      'replay cache unavailable',
    ]);
    expect(replayCacheRefusalReason(full)).toBe('replay_cache_full');
    expect(replayCacheRefusalReason(down)).toBe('replay_cache_unavailable');
    expect(replayCacheRefusalReason(new Error('other'))).toBeUndefined();
  });
});
