import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StampHasher } from '../src/stamp-hash.js';

describe('StampHasher', () => {
  it('equals SHA-256 of prefix || nonce || suffix for any lengths', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.uint8Array({ minLength: 1, maxLength: 20 }),
        fc.uint8Array({ maxLength: 200 }),
        (prefix, nonce, suffix) => {
          const h = new StampHasher(prefix, nonce.length, suffix);
          h.tail.set(nonce, h.nonceOffset);
          const expected = sha256(new Uint8Array([...prefix, ...nonce, ...suffix]));
          expect(h.digest()).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('counts leading zero bits of the digest', () => {
    // Search a few nonces until one digest starts with a zero byte, and compare the counts.
    const h = new StampHasher(new Uint8Array(70).fill(1), 4, new Uint8Array(10).fill(2));
    for (let n = 0; n < 5000; n++) {
      new DataView(h.tail.buffer).setUint32(h.nonceOffset, n);
      const digest = h.digest();
      let lz = 0;
      for (const b of digest) {
        if (b === 0) lz += 8;
        else {
          lz += Math.clz32(b) - 24;
          break;
        }
      }
      expect(h.leadingZeroBits()).toBe(lz);
    }
  });
});
