import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jcs } from '../src/index.js';

// Our one-pass writer must produce what the `canonicalize` package (decision 0025's oracle)
// produces, for every JSON value it accepts: the RFC 8785 files check the edge cases, this checks
// the shapes in between.
const safeNumber = fc.oneof(
  fc.integer({ min: -(2 ** 53 - 1), max: 2 ** 53 - 1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n) || Math.abs(n) >= 1e21),
);
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    safeNumber,
    text,
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), tie('value'), { maxKeys: 6 }),
})).value;

describe('jcs against the canonicalize package', () => {
  it('writes the same text for any JSON value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(jcs(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('skips undefined members and writes undefined array items as null, as canonicalize does', () => {
    const value = { b: undefined, a: [1, undefined, 'x'], c: { toJSON: () => 'y' } };
    expect(jcs(value)).toBe(canonicalize(value));
  });
});
