import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  type InvalidBatchEntry,
  isInvalidEntry,
  type ParsedInput,
  parseMessage,
  validateParams,
  WmpError,
} from '../src/index.js';
import { wmpMethods } from '../src/methods.js';

// Parsing is the first thing untrusted bytes meet. Each property below feeds input that must be
// refused and asserts that it was, with the code a peer would get; a success fails the property.

/**
 * The codes `run` refused its frame with: the one WmpError it threw, or, for a batch it returned,
 * each entry's own error. Fails when a message got through.
 */
function refusals(run: () => ParsedInput): number[] {
  let parsed: ParsedInput;
  try {
    parsed = run();
  } catch (e) {
    expect(e).toBeInstanceOf(WmpError);
    return [(e as WmpError).code];
  }
  if (parsed.kind === 'message') expect.fail(`accepted ${JSON.stringify(parsed.message)}`);
  if (parsed.kind === 'invalid') return [parsed.invalid.code];
  const accepted = parsed.entries.filter((entry) => !isInvalidEntry(entry));
  expect(accepted, 'batch entries that got through').toEqual([]);
  return parsed.entries.map((entry) => (entry as InvalidBatchEntry).invalid.code);
}

// An unsafe integer inside a message's params is -32602 to its id (judged with the message).
const PARSE_OR_INVALID = [ErrorCode.ParseError, ErrorCode.InvalidRequest, ErrorCode.InvalidParams];
const limits = { maxBytes: 4096, maxDepth: 8, maxBatch: 5 };

/** Any JSON value that is not a string or a safe integer: never a request id. */
const notAnId = fc.oneof(
  fc.double().filter((n) => !Number.isSafeInteger(n)),
  fc.boolean(),
  fc.object(),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.string({ minLength: 257, maxLength: 300 }),
);
const notAString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.object(), fc.array(fc.string()));
const request = { jsonrpc: '2.0', id: 'r', method: 'wmp.message.deliver', params: { wmp: { version: '0.1' } } };
const without = (o: Record<string, unknown>, key: string) => {
  const { [key]: _gone, ...rest } = o;
  return rest;
};

/** JSON-RPC-like values, each broken in one way that JSON-RPC 2.0 (and so toMessage) refuses. */
const brokenMessage = fc.oneof(
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
  fc
    .jsonValue()
    .filter((v) => v !== '2.0')
    .map((jsonrpc) => ({ ...request, jsonrpc })),
  fc.constant(without(request, 'jsonrpc')),
  fc.oneof(notAString, fc.constant(''), fc.string({ minLength: 129, maxLength: 140 })).map((method) => ({
    ...request,
    method,
  })),
  fc.constantFrom('result', 'error').map((key) => ({ ...request, [key]: {} })),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)).map((params) => ({ ...request, params })),
  notAnId.map((id) => ({ ...request, id })),
  fc.constant({ jsonrpc: '2.0', result: {} }),
  fc.constant({ jsonrpc: '2.0', id: 1 }),
  fc.constant({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } }),
  fc.oneof(notAnId, fc.constant(null)).map((id) => ({ jsonrpc: '2.0', id, result: {} })),
  fc
    .oneof(
      fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
      fc.record({ code: fc.double().filter((n) => !Number.isSafeInteger(n)), message: fc.string() }),
      fc.record({ code: fc.integer(), message: notAString }),
      fc.record({ message: fc.string() }),
    )
    .map((error) => ({ jsonrpc: '2.0', id: 1, error })),
);

describe('parser fuzzing', () => {
  it('random bytes are refused with -32700 or -32600', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        for (const code of refusals(() => parseMessage(bytes, limits))) expect(PARSE_OR_INVALID).toContain(code);
      }),
      { numRuns: 2000 },
    );
  });

  it('random strings are refused with -32700 or -32600', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 512 }), (s) => {
        for (const code of refusals(() => parseMessage(s, limits))) expect(PARSE_OR_INVALID).toContain(code);
      }),
      { numRuns: 2000 },
    );
  });

  it('random JSON values are refused with -32600', () => {
    // Not JSON-RPC: without a "jsonrpc": "2.0" member no object is a message.
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        for (const code of refusals(() => parseMessage(JSON.stringify(v), limits))) {
          expect(code).toBe(ErrorCode.InvalidRequest);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a broken message, alone or in a batch, is refused with -32600 (in a batch, entry by entry)', () => {
    fc.assert(
      fc.property(fc.oneof(brokenMessage, fc.array(brokenMessage, { maxLength: 7 })), (v) => {
        const codes = refusals(() => parseMessage(JSON.stringify(v), limits));
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) expect(code).toBe(ErrorCode.InvalidRequest);
      }),
      { numRuns: 2000 },
    );
  });

  it('a mutated valid message is refused exactly when it is not one, and parses to what it says otherwise', () => {
    // A one-character edit may leave a valid message (an id "r" becomes "x"), so JSON.parse is the
    // oracle: text it refuses must be -32700; text it reads is either that same message or -32600
    // (our stricter rules: duplicate keys, unsafe integers, the JSON-RPC shape).
    const base =
      '{"jsonrpc":"2.0","id":"r","method":"wmp.message.deliver","params":{"wmp":{"version":"0.1"},"to":["a"]}}';
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.string({ maxLength: 4 }), (at, insert) => {
        const text = base.slice(0, at) + insert + base.slice(at + 1);
        let oracle: unknown;
        try {
          oracle = JSON.parse(text);
        } catch {
          expect(refusals(() => parseMessage(text, limits))).toEqual([ErrorCode.ParseError]);
          return;
        }
        let parsed: ParsedInput;
        try {
          parsed = parseMessage(text, limits);
        } catch (e) {
          expect(e).toBeInstanceOf(WmpError);
          expect((e as WmpError).code).toBe(ErrorCode.InvalidRequest);
          return;
        }
        if (parsed.kind === 'invalid') {
          // Our stricter rule on integers, judged with the message: the message is the one JSON.parse read.
          expect(parsed.message).toEqual(oracle);
          return;
        }
        expect(parsed.kind === 'message' ? parsed.message : parsed.entries).toEqual(oracle);
      }),
      { numRuns: 2000 },
    );
  });

  it('random params are refused by every method with -32602', () => {
    // Every method's params need a `wmp` object with a version; random values never have one.
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(wmpMethods)), fc.anything(), (method, params) => {
        expect(() => validateParams(method, params)).toThrow(
          expect.objectContaining({ code: ErrorCode.InvalidParams }),
        );
      }),
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
