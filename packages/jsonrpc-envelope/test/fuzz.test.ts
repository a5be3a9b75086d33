import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMessage, validateParams, WmpError } from '../src/index.js';
import { methodSpecs } from '../src/methods.js';

// Parsing is the first thing untrusted bytes meet: whatever they are, the only way out is a
// WmpError (or a result).
function onlyWmpErrors(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch (e) {
    return e instanceof WmpError;
  }
}

const limits = { maxBytes: 4096, maxDepth: 8, maxBatch: 5 };
const jsonRpcish = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.string()),
    id: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.object()),
    method: fc.oneof(fc.constantFrom(...Object.keys(methodSpecs)), fc.string()),
    params: fc.oneof(fc.object(), fc.anything()),
    result: fc.anything(),
    error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), fc.anything()),
  },
  { requiredKeys: [] },
);

describe('parser fuzzing', () => {
  it('random bytes only ever produce a WmpError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => onlyWmpErrors(() => parseMessage(bytes, limits))),
      {
        numRuns: 2000,
      },
    );
  });

  it('random strings only ever produce a WmpError', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 512 }), (s) => onlyWmpErrors(() => parseMessage(s, limits))),
      {
        numRuns: 2000,
      },
    );
  });

  it('random JSON values and batches only ever produce a WmpError', () => {
    const value = fc.oneof(fc.jsonValue(), jsonRpcish, fc.array(jsonRpcish, { maxLength: 7 }));
    fc.assert(
      fc.property(value, (v) => onlyWmpErrors(() => parseMessage(JSON.stringify(v), limits))),
      { numRuns: 2000 },
    );
  });

  it('mutated valid messages only ever produce a WmpError', () => {
    const base =
      '{"jsonrpc":"2.0","id":"r","method":"wmp.message.deliver","params":{"wmp":{"version":"0.1"},"to":["a"]}}';
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.string({ maxLength: 4 }), (at, insert) =>
        onlyWmpErrors(() => parseMessage(base.slice(0, at) + insert + base.slice(at + 1), limits)),
      ),
      { numRuns: 2000 },
    );
  });

  it('random params for every method only ever produce a WmpError from validateParams', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(methodSpecs)), fc.anything(), (method, params) =>
        onlyWmpErrors(() => validateParams(method, params)),
      ),
      { numRuns: 2000 },
    );
  });

  it('a parsed message re-serialises to the same value', () => {
    // JSON that WMP accepts: integers within ±(2^53-1), any finite fraction.
    const { json } = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.maxSafeInteger(),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('json'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('json'), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(json, fc.string({ maxLength: 20 }), (params, id) => {
        const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'm', params: { p: params } });
        const parsed = parseMessage(text, { ...limits, maxBytes: 1 << 20 });
        expect(parsed.kind).toBe('message');
        if (parsed.kind === 'message') expect(JSON.stringify(parsed.message)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});
