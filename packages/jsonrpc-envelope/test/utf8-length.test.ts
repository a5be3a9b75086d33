import { describe, expect, it } from 'vitest';
import { utf8Length } from '../src/index.js';

const encoded = (text: string) => new TextEncoder().encode(text).length;

describe('utf8Length (the byte count of every cap)', () => {
  it('counts what TextEncoder writes: ASCII, 2-, 3- and 4-byte characters, lone surrogates', () => {
    const samples = [
      '',
      'plain ascii {"a":1}',
      'é',
      '✓',
      '😀',
      '\ud800',
      '\udc00x',
      'x\ud83d',
      'a'.repeat(2000),
      `${'a'.repeat(2000)}é`,
      `${'a'.repeat(1000)}😀${'b'.repeat(1000)}\ud800${'c'.repeat(10)}`,
      'é'.repeat(300) + 'x'.repeat(300),
      '\u007f\u0080\u07ff\u0800\uffff',
    ];
    for (const text of samples) expect(utf8Length(text), JSON.stringify(text)).toBe(encoded(text));
  });

  it('agrees with TextEncoder on random strings of any code units, non-ASCII first anywhere', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 500; round++) {
      const prefix = 'a'.repeat(next() % 64);
      let rest = '';
      for (let k = next() % 40; k > 0; k--) {
        const pick = next() % 4;
        rest += String.fromCharCode(
          pick === 0 ? next() % 0x80 : pick === 1 ? 0xd800 + (next() % 0x800) : next() % 0x10000,
        );
      }
      const text = prefix + rest;
      expect(utf8Length(text)).toBe(encoded(text));
    }
  });
  it('stops counting past stopAbove, with an answer above it (enough to refuse the text)', () => {
    const text = `${'a'.repeat(50)}${'é'.repeat(100)}`;
    expect(utf8Length(text, 1000)).toBe(250);
    expect(utf8Length(text, 100)).toBeGreaterThan(100);
    expect(utf8Length(text, 100)).toBeLessThan(250);
  });
});
