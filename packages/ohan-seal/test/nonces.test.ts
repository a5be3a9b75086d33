import { describe, expect, it } from 'vitest';
import { MemoryNonceCache, NonceCacheFullError } from '../src/index.js';

describe('MemoryNonceCache', () => {
  it('remembers a nonce for its TTL, then forgets it', () => {
    let now = 0;
    const cache = new MemoryNonceCache({ now: () => now });
    expect(cache.seen('a', 600)).toBe(false);
    expect(cache.seen('a', 600)).toBe(true);
    now = 599_999;
    expect(cache.seen('a', 600)).toBe(true);
    now = 600_000;
    expect(cache.seen('a', 600)).toBe(false);
  });

  it('stays within its bound under a flood by refusing, never by forgetting an unexpired nonce', () => {
    let now = 0;
    const cache = new MemoryNonceCache({ maxEntries: 1000, maxPerKey: 1000, now: () => now });
    for (let i = 0; i < 1000; i++) expect(cache.seen(`n${i}`, 600)).toBe(false);
    expect(() => cache.seen('n1000', 600)).toThrow(NonceCacheFullError);
    expect(cache.size).toBe(1000);
    // Every nonce recorded is still known: a captured request cannot be replayed after a flood.
    expect(cache.seen('n0', 600)).toBe(true);
    expect(cache.seen('n999', 600)).toBe(true);
    // Once they expire there is room again.
    now = 600_000;
    expect(cache.seen('n1000', 600)).toBe(false);
    expect(cache.size).toBe(1);
  });

  it('gives each key only a share of the cache, so one caller cannot fill it for everyone', () => {
    const cache = new MemoryNonceCache({ maxEntries: 100, maxPerKey: 10 });
    for (let i = 0; i < 10; i++) cache.seen(`m${i}`, 600, 'mallory');
    expect(() => cache.seen('m10', 600, 'mallory')).toThrow(NonceCacheFullError);
    expect(cache.seen('a0', 600, 'alice')).toBe(false);
    expect(cache.size).toBe(11);
  });

  it('gives each source only a share too, counted per nonce whatever the key (issue 23 item 7)', () => {
    const cache = new MemoryNonceCache({ maxEntries: 100, maxPerKey: 100, maxPerSource: 10 });
    // Throwaway keys from one address: each key is far below its share, the source is not.
    for (let i = 0; i < 10; i++) expect(cache.seen(`s${i}`, 600, `key${i}`, '203.0.113.7')).toBe(false);
    expect(() => cache.seen('s10', 600, 'key10', '203.0.113.7')).toThrow(NonceCacheFullError);
    // Nothing was recorded for the refused one; another source (and the keyless, sourceless) still go.
    expect(() => cache.seen('s10', 600, 'key10', '203.0.113.7')).toThrow(NonceCacheFullError);
    expect(cache.seen('t0', 600, 'key0', '198.51.100.1')).toBe(false);
    expect(cache.seen('u0', 600)).toBe(false);
    expect(cache.size).toBe(12);
  });

  it('frees a source’s share as its nonces expire', () => {
    let now = 0;
    const cache = new MemoryNonceCache({ maxEntries: 100, maxPerSource: 2, now: () => now });
    cache.seen('a', 600, 'k1', 'src');
    cache.seen('b', 600, 'k2', 'src');
    expect(() => cache.seen('c', 600, 'k3', 'src')).toThrow(NonceCacheFullError);
    now = 600_000;
    expect(cache.seen('c', 600, 'k3', 'src')).toBe(false);
  });
});
