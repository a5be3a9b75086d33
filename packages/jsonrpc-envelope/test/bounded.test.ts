import { describe, expect, it } from 'vitest';
import { BoundedMap, BoundedSet } from '../src/index.js';

describe('BoundedMap and BoundedSet', () => {
  it('forget the oldest entry when a new one comes in full, never for a key already held', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3);
    expect([...map]).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    map.set('c', 4);
    expect([...map.keys()]).toEqual(['b', 'c']);
    // Used entries kept longest: delete and set again.
    map.delete('b');
    map.set('b', 2).set('d', 5);
    expect([...map.keys()]).toEqual(['b', 'd']);
    const set = new BoundedSet<number>(3);
    for (const n of [1, 2, 3, 1, 4, 5]) set.add(n);
    expect([...set]).toEqual([3, 4, 5]);
    expect(set.size).toBe(3);
  });

  it('refuse a ceiling that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new BoundedMap(bad)).toThrow(RangeError);
      expect(() => new BoundedSet(bad)).toThrow(RangeError);
    }
  });
});
