import { describe, expect, it } from 'vitest';
import { copyMembers } from '../src/relay/support/members.js';

describe('copyMembers', () => {
  it('writes what a spread writes, in the same order, leaving out what it is told to', () => {
    const source = { b: 1, a: { deep: true }, c: 'x', skip: 2 };
    const copy = copyMembers<Record<string, unknown>>({ first: 0 }, source, new Set(['skip']));
    const { skip: _skip, ...spread } = source;
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ first: 0, ...spread }));
    expect(copy.a).toBe(source.a); // members, not deep copies
  });

  it('defines a __proto__ member from JSON as a member, never as the prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
    const copy = copyMembers<Record<string, unknown>>({}, parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"x":1}');
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...parsed }));
  });

  it('leaves members already on the target where they are and overwrites their values', () => {
    const copy = copyMembers<Record<string, unknown>>({ sender: 'old', id: 1 }, { id: 2, sender: 'new' });
    expect(Object.entries(copy)).toEqual([
      ['sender', 'new'],
      ['id', 2],
    ]);
  });
});
