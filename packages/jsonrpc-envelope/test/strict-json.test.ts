import { describe, expect, it } from 'vitest';
import { codeOf } from '../../../test-support/code-of.js';
import { ErrorCode, parseStrictJson } from '../src/index.js';

const limits = { maxBytes: 1 << 20, maxDepth: 32 };

/** Strings that end in backslash runs, hold quotes, colons and brackets: what a string skip can get wrong. */
const TRICKY = ['', '\\', '\\\\', '\\\\\\', '"', '\\"', '\\\\"', 'a:b', '{"k":1}', '[', ']}', 'x\\', 'é😀\\', '\u2028'];

describe('parseStrictJson skips string literals exactly', () => {
  it('parses every object of tricky keys and values to what JSON.stringify wrote, none refused', () => {
    for (const key of TRICKY) {
      for (const value of TRICKY) {
        const object = { [key]: value, [`${key}2`]: { [value]: [key, value] }, last: 1 };
        const text = JSON.stringify(object);
        expect(parseStrictJson(text, limits)).toEqual(JSON.parse(text));
      }
    }
  });

  it('refuses a duplicate of any tricky key, and counts brackets inside strings as no nesting', async () => {
    for (const key of TRICKY) {
      const k = JSON.stringify(key);
      expect(await codeOf(() => parseStrictJson(`{${k}:1,"s":"\\\\",${k}:2}`, limits))).toBe(ErrorCode.InvalidRequest);
    }
    // 40 brackets inside a string are text; 40 outside are too deep.
    expect(parseStrictJson(`{"s":"${'['.repeat(40)}\\\\"}`, limits)).toEqual({ s: `${'['.repeat(40)}\\` });
    expect(await codeOf(() => parseStrictJson(`${'['.repeat(40)}${']'.repeat(40)}`, limits))).toBe(
      ErrorCode.InvalidRequest,
    );
  });

  it('refuses an unterminated string as invalid JSON', async () => {
    for (const text of ['{"a":"x\\"}', '{"a\\":1}', '"\\\\\\"'])
      expect(await codeOf(() => parseStrictJson(text, limits))).toBe(ErrorCode.ParseError);
  });
});
