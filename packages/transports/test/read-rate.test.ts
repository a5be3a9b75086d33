import { describe, expect, it } from 'vitest';
import { READ_COST_PER_FRAME, SourceReadRate } from '../src/index.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('SourceReadRate', () => {
  it('lets a source read its burst, then says how long it waits at its rate', () => {
    const c = clock();
    const rate = new SourceReadRate({ bytesPerSecond: 1000, burstBytes: 3 * READ_COST_PER_FRAME + 300, now: c.now });
    expect(rate.charge('a', 100)).toBe(0);
    expect(rate.charge('a', 100)).toBe(0);
    expect(rate.charge('a', 100)).toBe(0);
    // 300 bytes over the burst: 0.3 s at 1000 bytes per second.
    expect(rate.charge('a', 300 - READ_COST_PER_FRAME)).toBe(300);
    expect(rate.waits).toBe(1);
    // Another source has its own bucket.
    expect(rate.charge('b', 100)).toBe(0);
    // Time refills what was spent, never beyond the burst.
    c.advance(300);
    expect(rate.charge('a', 0)).toBe(READ_COST_PER_FRAME);
  });

  it('counts each frame as its bytes and the per-frame cost: many small frames are not free', () => {
    const c = clock();
    const rate = new SourceReadRate({ bytesPerSecond: 10_000, burstBytes: 10 * READ_COST_PER_FRAME, now: c.now });
    const waits = Array.from({ length: 11 }, () => rate.charge('a', 0));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits[10]).toBeGreaterThan(0);
  });

  it('tracks a bounded number of sources, and forgets only those that owe nothing', () => {
    const c = clock();
    const rate = new SourceReadRate({ bytesPerSecond: 1000, burstBytes: 1000, maxSources: 2, now: c.now });
    // 'debtor' owes 1 s; 'paid' has its full burst back.
    expect(rate.charge('debtor', 2000 - READ_COST_PER_FRAME)).toBe(1000);
    expect(rate.charge('paid', 0)).toBe(0);
    c.advance(600);
    // A third source takes the place of 'paid' (refilled), not of the debtor.
    expect(rate.charge('third', 0)).toBe(0);
    expect(rate.charge('debtor', 0)).toBeGreaterThan(900);
    // When every tracked source is in debt, new ones share one bucket: none gets a fresh burst.
    expect(rate.charge('third', 2000)).toBeGreaterThan(0);
    expect(rate.charge('new-1', 300)).toBe(0);
    expect(rate.charge('new-2', 300)).toBeGreaterThan(0);
  });

  it('refuses a rate or burst that is not positive', () => {
    expect(() => new SourceReadRate({ bytesPerSecond: 0, burstBytes: 1 })).toThrow(RangeError);
    expect(() => new SourceReadRate({ bytesPerSecond: 1, burstBytes: Number.NaN })).toThrow(RangeError);
  });
});
