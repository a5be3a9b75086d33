import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError, jcs, jcsBytes, toHex } from '../src/index.js';

const dir = new URL('../../../vectors/jcs/', import.meta.url);
const names = readdirSync(new URL('input/', dir)).map((f) => f.replace(/\.json$/, ''));

describe('RFC 8785 reference data', () => {
  it('has all six files', () => {
    expect(names.sort()).toEqual(['arrays', 'french', 'structures', 'unicode', 'values', 'weird']);
  });

  for (const name of names) {
    it(`${name}: canonical bytes equal output/ and outhex/`, () => {
      const input = JSON.parse(readFileSync(new URL(`input/${name}.json`, dir), 'utf8'));
      const expected = readFileSync(new URL(`output/${name}.json`, dir));
      const hex = readFileSync(new URL(`outhex/${name}.txt`, dir), 'utf8')
        .split(/\s+/)
        .join('');
      const bytes = jcsBytes(input);
      expect(Buffer.from(bytes).equals(expected)).toBe(true);
      expect(toHex(bytes)).toBe(hex.toLowerCase());
    });
  }
});

describe('jcs', () => {
  it('sorts keys by UTF-16 code units and writes ES6 numbers', () => {
    expect(jcs({ b: 1, a: [1e21, 1e-7, -0, 0.1], '\u{10000}': 1, '\uffff': 2 })).toBe(
      '{"a":[1e+21,1e-7,0,0.1],"b":1,"\u{10000}":1,"\uffff":2}',
    );
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['an unsafe integer', { n: 2 ** 53 }],
    ['a large integer written as digits', { n: 1e20 }],
    ['a bigint', { n: 1n }],
    ['a lone surrogate value', { s: '\ud800' }],
    ['a lone surrogate key', { '\udc00': 1 }],
    ['undefined', undefined],
  ])('refuses %s', (_name, value) => {
    expect(() => jcs(value)).toThrow(CanonicalizationError);
  });
});
