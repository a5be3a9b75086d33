import { describe, expect, it } from 'vitest';
import { MemoryNonceCache } from '../src/index.js';

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

  it('stays within its bound under a flood', () => {
    const cache = new MemoryNonceCache({ maxEntries: 1000 });
    for (let i = 0; i < 10_000; i++) cache.seen(`n${i}`, 600);
    expect(cache.size).toBe(1000);
    expect(cache.seen('n9999', 600)).toBe(true);
  });
});
