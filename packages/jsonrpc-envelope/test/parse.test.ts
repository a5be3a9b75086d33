import { describe, expect, it } from 'vitest';
import { codeOf } from '../../../test-support/code-of.js';
import { ErrorCode, isInvalidEntry, parseMessage, parseSingleMessage } from '../src/index.js';

const req = (extra = '') =>
  `{"jsonrpc":"2.0","id":1,"method":"wmp.capability.list","params":{"wmp":{"version":"0.1"}}${extra}}`;

describe('parseMessage', () => {
  it('parses a request, a notification and both kinds of response', () => {
    expect(parseSingleMessage(req())).toMatchObject({ id: 1, method: 'wmp.capability.list' });
    expect(parseSingleMessage('{"jsonrpc":"2.0","method":"m"}')).toEqual({ jsonrpc: '2.0', method: 'm' });
    expect(parseSingleMessage('{"jsonrpc":"2.0","id":"a","result":{}}')).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      result: {},
    });
    expect(
      parseSingleMessage('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'),
    ).toMatchObject({
      id: null,
    });
  });

  it('accepts UTF-8 bytes and refuses malformed UTF-8 with -32700', async () => {
    expect(parseSingleMessage(new TextEncoder().encode(req()))).toMatchObject({ id: 1 });
    const bad = new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]);
    expect(await codeOf(() => parseMessage(bad))).toBe(ErrorCode.ParseError);
  });

  it.each([
    ['invalid JSON', '{"jsonrpc":"2.0",', ErrorCode.ParseError],
    ['empty input', '', ErrorCode.ParseError],
    ['a lone surrogate', '{"a":"\ud800"}', ErrorCode.ParseError],
    ['a scalar', '42', ErrorCode.InvalidRequest],
    ['a wrong version', '{"jsonrpc":"1.0","method":"m"}', ErrorCode.InvalidRequest],
    ['an empty method', '{"jsonrpc":"2.0","method":""}', ErrorCode.InvalidRequest],
    ['scalar params', '{"jsonrpc":"2.0","method":"m","params":3}', ErrorCode.InvalidRequest],
    ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"m"}', ErrorCode.InvalidRequest],
    ['a null request id', '{"jsonrpc":"2.0","id":null,"method":"m"}', ErrorCode.InvalidRequest],
    [
      'result and error',
      '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}',
      ErrorCode.InvalidRequest,
    ],
    ['a response without id', '{"jsonrpc":"2.0","result":1}', ErrorCode.InvalidRequest],
    ['a duplicate key', '{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}', ErrorCode.InvalidRequest],
    [
      'an escaped duplicate key',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1,"\\u0061":1}}',
      ErrorCode.InvalidRequest,
    ],
    ['a nested duplicate', '{"jsonrpc":"2.0","method":"m","params":{"x":[{"b":1,"b":2}]}}', ErrorCode.InvalidRequest],
    [
      'a __proto__ duplicate',
      '{"jsonrpc":"2.0","method":"m","params":{"__proto__":1,"__proto__":2}}',
      ErrorCode.InvalidRequest,
    ],
    ['an unsafe integer id', '{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}', ErrorCode.InvalidRequest],
    ['an empty batch', '[]', ErrorCode.InvalidRequest],
  ])('refuses %s', async (_name, text, code) => {
    expect(await codeOf(() => parseMessage(text))).toBe(code);
  });

  it('keeps keys that only look alike', () => {
    expect(parseSingleMessage('{"jsonrpc":"2.0","method":"m","params":{"a:b":1,"a":2,"s":"x\\":y"}}')).toMatchObject({
      params: { 'a:b': 1, a: 2, s: 'x":y' },
    });
  });

  it('accepts the largest safe integers and fractions of any size', async () => {
    const m = parseSingleMessage(
      '{"jsonrpc":"2.0","method":"m","params":[9007199254740991,-9007199254740991,1.5e-300,0.5]}',
    );
    expect(m).toMatchObject({ params: [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5e-300, 0.5] });
    // Written as digits, 2^53+1 would silently become 2^53; from 1e21 on JSON uses exponents,
    // which everyone reads as the double it is.
    expect(
      await codeOf(() => parseSingleMessage('{"jsonrpc":"2.0","method":"m","params":[99999999999999999999]}')),
    ).toBe(ErrorCode.InvalidParams);
    expect(() => parseMessage('{"jsonrpc":"2.0","method":"m","params":[1e21,1e300]}')).not.toThrow();
  });

  it('judges an unsafe integer with its message: -32602 to the id of the request whose params hold it', async () => {
    const request = parseMessage(
      '{"jsonrpc":"2.0","id":7,"method":"wmp.message.fetch","params":{"since_epoch":9007199254740993}}',
    );
    expect(request).toMatchObject({ kind: 'invalid', id: 7, invalid: { code: ErrorCode.InvalidParams } });
    expect((request as { invalid: { data: unknown } }).invalid.data).toEqual({ reason: 'integer out of range' });
    const negative = parseMessage('{"jsonrpc":"2.0","id":"r","method":"m","params":[-9007199254740993]}');
    expect(negative).toMatchObject({ kind: 'invalid', id: 'r', invalid: { code: ErrorCode.InvalidParams } });
    // A notification has no id to answer; elsewhere than params it is an invalid request, to the id.
    expect(parseMessage('{"jsonrpc":"2.0","method":"m","params":{"n":9007199254740992}}')).toMatchObject({
      kind: 'invalid',
      id: null,
    });
    expect(parseMessage('{"jsonrpc":"2.0","id":8,"method":"m","x":9007199254740993}')).toMatchObject({
      kind: 'invalid',
      id: 8,
      invalid: { code: ErrorCode.InvalidRequest },
    });
    expect(parseMessage('{"jsonrpc":"2.0","id":9,"result":{"n":9007199254740993}}')).toMatchObject({
      kind: 'invalid',
      id: null,
    });
    // In a batch, only the entry holding it.
    const batch = parseMessage(
      '[{"jsonrpc":"2.0","id":1,"method":"m","params":[1]},{"jsonrpc":"2.0","id":2,"method":"m","params":[9007199254740993]}]',
    );
    expect(batch.kind).toBe('batch');
    const entries = (batch as unknown as { entries: unknown[] }).entries;
    expect(entries[0]).toMatchObject({ id: 1, method: 'm' });
    expect(entries[1]).toMatchObject({ id: 2, invalid: { code: ErrorCode.InvalidParams } });
    expect(
      await codeOf(() => parseSingleMessage('{"jsonrpc":"2.0","id":3,"method":"m","params":[9007199254740993]}')),
    ).toBe(ErrorCode.InvalidParams);
  });

  it('enforces the nesting limit of 32 before parsing', async () => {
    const nest = (depth: number) =>
      `{"jsonrpc":"2.0","method":"m","params":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(() => parseMessage(nest(32))).not.toThrow();
    expect(await codeOf(() => parseMessage(nest(33)))).toBe(ErrorCode.InvalidRequest);
    // Far too deep for a recursive parser: refused, not a stack overflow.
    expect(await codeOf(() => parseMessage('['.repeat(1_000_000)))).toBe(ErrorCode.InvalidRequest);
  });

  it('enforces the size limit in UTF-8 bytes', async () => {
    const limits = { maxBytes: 100, maxDepth: 32, maxBatch: 100 };
    const fits = `{"jsonrpc":"2.0","method":"m","params":["${'a'.repeat(50)}"]}`;
    expect(() => parseMessage(fits, limits)).not.toThrow();
    // Same number of UTF-16 units, but "é" is two bytes in UTF-8.
    const over = `{"jsonrpc":"2.0","method":"m","params":["${'é'.repeat(50)}"]}`;
    expect(await codeOf(() => parseMessage(over, limits))).toBe(ErrorCode.InvalidRequest);
    expect(await codeOf(() => parseMessage(new TextEncoder().encode(over), limits))).toBe(ErrorCode.InvalidRequest);
  });

  it('answers a batch entry by entry and limits the batch to 100', async () => {
    const parsed = parseMessage(`[${req()}, 1, {"jsonrpc":"2.0","id":"x"}]`);
    expect(parsed.kind).toBe('batch');
    if (parsed.kind !== 'batch') return;
    expect(parsed.entries).toHaveLength(3);
    expect(isInvalidEntry(parsed.entries[0]!)).toBe(false);
    const second = parsed.entries[1]!;
    const third = parsed.entries[2]!;
    expect(isInvalidEntry(second) && second.invalid.code === ErrorCode.InvalidRequest && second.id === null).toBe(true);
    expect(isInvalidEntry(third) && third.id === 'x').toBe(true);
    const hundred = `[${Array.from({ length: 100 }, () => req()).join(',')}]`;
    expect(() => parseMessage(hundred)).not.toThrow();
    expect(await codeOf(() => parseMessage(`[${Array.from({ length: 101 }, () => req()).join(',')}]`))).toBe(
      ErrorCode.InvalidRequest,
    );
    expect(await codeOf(() => parseSingleMessage(`[${req()}]`))).toBe(ErrorCode.InvalidRequest);
  });
});
