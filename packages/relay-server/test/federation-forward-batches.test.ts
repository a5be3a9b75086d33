// How a page of forwards is cut into frames (forward-batches.ts): in order, at most
// MAX_FORWARD_BATCH entries and the peer's frame size each; an entry too large to share goes alone.
import { describe, expect, it } from 'vitest';
import { FORWARD_ENTRY_OVERHEAD, forwardBatches, MAX_FORWARD_BATCH } from '../src/relay/federation/forward-batches.js';

const entries = (sizes: readonly number[]) => sizes.map((bytes, n) => ({ n, bytes }));
const shape = (batches: { n: number }[][]) => batches.map((b) => b.map((e) => e.n));

describe('federation: forwards in batches', () => {
  it('keeps a page in one batch up to MAX_FORWARD_BATCH entries, in order', () => {
    const page = entries(Array.from({ length: 2 * MAX_FORWARD_BATCH + 1 }, () => 100));
    const batches = forwardBatches(page, 1 << 30);
    expect(batches.map((b) => b.length)).toEqual([MAX_FORWARD_BATCH, MAX_FORWARD_BATCH, 1]);
    expect(batches.flat()).toEqual(page);
  });

  it("cuts where the next entry would pass the peer's frame size", () => {
    const frame = 3 * (1000 + FORWARD_ENTRY_OVERHEAD);
    expect(shape(forwardBatches(entries([1000, 1000, 1000, 1000, 10]), frame))).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
  });

  it('sends an entry larger than a frame alone, between the batches around it', () => {
    expect(shape(forwardBatches(entries([10, 5000, 10, 10]), 2000))).toEqual([[0], [1], [2, 3]]);
    expect(forwardBatches([], 2000)).toEqual([]);
  });
});
