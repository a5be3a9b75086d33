import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeLengthPrefixed,
  type FrameReader,
  FrameTooLargeError,
  FramingError,
  InvalidUtf8Error,
  LengthPrefixedReadBuffer,
  LineTooLongError,
  NdjsonReadBuffer,
  nativeEndianness,
  serializeNdjson,
  TruncatedFrameError,
} from '../src/index.js';

const enc = new TextEncoder();
const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...enc.encode(p)] : p)));

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** A frame's text, or the code of the error read in its place. */
type Item = string | { error: string };

/** Reads everything buffered. Anything thrown that is not a FramingError fails the test. */
function drain(reader: FrameReader): Item[] {
  const out: Item[] = [];
  for (;;) {
    try {
      const frame = reader.next();
      if (frame === undefined) return out;
      out.push(frame);
    } catch (e) {
      if (!(e instanceof FramingError)) throw e;
      out.push({ error: e.code });
    }
  }
}

function feed(reader: FrameReader, chunks: Uint8Array[], end = true): Item[] {
  const out: Item[] = [];
  for (const c of chunks) {
    reader.append(c);
    out.push(...drain(reader));
  }
  if (end) reader.end();
  return [...out, ...drain(reader)];
}

/** Cuts `data` at the given points (any values; folded into range, sorted, deduplicated). */
function split(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const c of [...at, data.length]) {
    out.push(data.slice(start, c));
    start = c;
  }
  return out;
}

/** The NDJSON rules written the slow, obvious way, for the streaming reader to agree with. */
function ndjsonModel(data: Uint8Array, max: number): Item[] {
  const segments: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0x0a) {
      segments.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < data.length) segments.push(data.subarray(start));
  const out: Item[] = [];
  for (const s of segments) {
    const body = s.at(-1) === 0x0d ? s.subarray(0, -1) : s;
    if (body.length > max) out.push({ error: 'ERR_LINE_TOO_LONG' });
    else if (body.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) continue;
    else {
      try {
        out.push(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
      } catch {
        out.push({ error: 'ERR_INVALID_UTF8' });
      }
    }
  }
  return out;
}

/** Bytes rich in what matters: newlines, CRs, blanks, UTF-8 lead and continuation bytes. */
const streamBytes = fc
  .array(
    fc.oneof(
      fc.constantFrom(0x0a, 0x0d, 0x20, 0x09, 0x7b, 0x22, 0x61),
      fc.constantFrom(0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xc0),
      fc.integer({ min: 0, max: 255 }),
    ),
    { maxLength: 300 },
  )
  .map((a) => Uint8Array.from(a));
const cutPoints = fc.array(fc.nat(), { maxLength: 40 });

describe('NdjsonReadBuffer', () => {
  it('yields complete lines, handles CRLF, skips blank lines, keeps the partial line', () => {
    const r = new NdjsonReadBuffer();
    r.append(bytes('{"a":1}\n\n  \r\n{"b":2}\r\n{"c"'));
    expect(drain(r)).toEqual(['{"a":1}', '{"b":2}']);
    expect(r.bufferedBytes).toBe(4);
    r.append(bytes(':3}\n'));
    expect(drain(r)).toEqual(['{"c":3}']);
    expect(r.bufferedBytes).toBe(0);
  });

  it('copies a partial line, since a stream may reuse its chunk buffer', () => {
    const r = new NdjsonReadBuffer();
    const reused = bytes('{"a"');
    r.append(reused);
    reused.fill(0x78);
    r.append(bytes(':1}\n'));
    expect(drain(r)).toEqual(['{"a":1}']);
  });

  it('reads an unterminated last line at end of stream', () => {
    const r = new NdjsonReadBuffer();
    r.append(bytes('{"a":1}\n{"b":2}'));
    expect(drain(r)).toEqual(['{"a":1}']);
    r.end();
    expect(drain(r)).toEqual(['{"b":2}']);
  });

  it('decodes a multi-byte character split across chunks at every position', () => {
    const line = bytes('"€ 😀 é"\n');
    for (let cut = 1; cut < line.length; cut++) {
      const r = new NdjsonReadBuffer();
      expect(feed(r, [line.slice(0, cut), line.slice(cut)])).toEqual(['"€ 😀 é"']);
    }
    const r = new NdjsonReadBuffer();
    expect(
      feed(
        r,
        [...line].map((b) => Uint8Array.of(b)),
      ),
    ).toEqual(['"€ 😀 é"']);
  });

  it('reports an over-long line once, drops it up to the newline and reads on', () => {
    const r = new NdjsonReadBuffer({ maxLineBytes: 8 });
    const chunks = [bytes('{"ok":1}\n{"far'), bytes('too":"long'), bytes('","x":'), bytes('1}\n{"b":2}\n')];
    expect(feed(r, chunks)).toEqual(['{"ok":1}', { error: 'ERR_LINE_TOO_LONG' }, '{"b":2}']);
  });

  it('never buffers more than the limit for an over-long line', () => {
    const r = new NdjsonReadBuffer({ maxLineBytes: 16 });
    for (let i = 0; i < 1000; i++) {
      r.append(new Uint8Array(1024).fill(0x61));
      expect(r.bufferedBytes).toBeLessThanOrEqual(17);
    }
    expect(drain(r)).toEqual([{ error: 'ERR_LINE_TOO_LONG' }]);
    r.append(bytes('a\n{}\n'));
    expect(drain(r)).toEqual(['{}']);
  });

  it('counts the limit without the line ending', () => {
    const r = new NdjsonReadBuffer({ maxLineBytes: 4 });
    expect(feed(r, [bytes('abcd\r'), bytes('\nabcd\nabcde\nabc\r\r\n')])).toEqual([
      'abcd',
      'abcd',
      { error: 'ERR_LINE_TOO_LONG' },
      'abc\r',
    ]);
  });

  it('reports a line that is not UTF-8 and reads on', () => {
    const r = new NdjsonReadBuffer();
    expect(feed(r, [bytes('"a', [0xff], '"\n', '"', [0xed, 0xa0, 0x80], '"\n{}\n')])).toEqual([
      { error: 'ERR_INVALID_UTF8' },
      { error: 'ERR_INVALID_UTF8' },
      '{}',
    ]);
    const b = new NdjsonReadBuffer();
    b.append(Uint8Array.of(0xc0, 0x0a));
    const err = caught(() => b.next());
    expect(err).toBeInstanceOf(InvalidUtf8Error);
    expect((err as FramingError).fatal).toBe(false);
  });

  it('throws the typed error class with its limit', () => {
    const r = new NdjsonReadBuffer({ maxLineBytes: 2 });
    r.append(bytes('abc\n'));
    expect(() => r.next()).toThrow(LineTooLongError);
    expect(r.next()).toBeUndefined();
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new NdjsonReadBuffer({ maxLineBytes: 0 })).toThrow(RangeError);
    expect(() => new NdjsonReadBuffer({ maxLineBytes: 1.5 })).toThrow(RangeError);
  });

  it('fuzz: any bytes, any chunking, agree with the model and throw only FramingError', () => {
    fc.assert(
      fc.property(streamBytes, cutPoints, fc.integer({ min: 1, max: 24 }), (data, cuts, max) => {
        const expected = ndjsonModel(data, max);
        expect(feed(new NdjsonReadBuffer({ maxLineBytes: max }), split(data, cuts))).toEqual(expected);
        expect(feed(new NdjsonReadBuffer({ maxLineBytes: max }), [data])).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('fuzz: serialized messages come back as their exact JSON text, however split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { minLength: 1, maxLength: 10 }),
        cutPoints,
        fc.boolean(),
        (values, cuts, crlf) => {
          const messages = values.map((v, i) => ({ jsonrpc: '2.0' as const, id: i, result: v }));
          let text = messages.map((m) => serializeNdjson(m)).join('');
          if (crlf) text = text.replaceAll('\n', '\r\n');
          const frames = feed(new NdjsonReadBuffer(), split(enc.encode(text), cuts));
          expect(frames).toEqual(messages.map((m) => JSON.stringify(m)));
          expect((frames as string[]).map((f) => JSON.parse(f))).toEqual(JSON.parse(JSON.stringify(messages)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('serializeNdjson', () => {
  it('writes one line even when strings hold newlines and separators', () => {
    const line = serializeNdjson({ jsonrpc: '2.0', method: 'x', params: { s: 'a\nb\r\u2028c' } });
    expect(line).toBe('{"jsonrpc":"2.0","method":"x","params":{"s":"a\\nb\\r\u2028c"}}\n');
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });

  it('writes a batch as one array line', () => {
    expect(
      serializeNdjson([
        { jsonrpc: '2.0', method: 'a' },
        { jsonrpc: '2.0', method: 'b' },
      ]),
    ).toBe('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]\n');
  });
});

/** Length-prefixed parsing the obvious way. */
function lengthPrefixedModel(data: Uint8Array, max: number, little: boolean): Item[] {
  const out: Item[] = [];
  let pos = 0;
  while (pos < data.length) {
    if (data.length - pos < 4) return [...out, { error: 'ERR_TRUNCATED_FRAME' }];
    const n = new DataView(data.buffer, data.byteOffset + pos, 4).getUint32(0, little);
    pos += 4;
    if (n > max) return [...out, { error: 'ERR_FRAME_TOO_LARGE' }];
    if (data.length - pos < n) return [...out, { error: 'ERR_TRUNCATED_FRAME' }];
    try {
      out.push(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data.subarray(pos, pos + n)));
    } catch {
      out.push({ error: 'ERR_INVALID_UTF8' });
    }
    pos += n;
  }
  return out;
}

describe('encodeLengthPrefixed', () => {
  it('writes a little-endian length, then the UTF-8 bytes, byte for byte', () => {
    expect([...encodeLengthPrefixed('{"a":"é"}', { endian: 'little' })]).toEqual([
      10, 0, 0, 0, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0x22, 0x7d,
    ]);
    const long = 'x'.repeat(0x010203);
    expect([...encodeLengthPrefixed(long, { endian: 'little' }).subarray(0, 5)]).toEqual([3, 2, 1, 0, 0x78]);
  });

  it('writes big-endian when asked, and native by default', () => {
    expect([...encodeLengthPrefixed('x'.repeat(0x0102), { endian: 'big' }).subarray(0, 4)]).toEqual([0, 0, 1, 2]);
    expect(encodeLengthPrefixed('{}')).toEqual(encodeLengthPrefixed('{}', { endian: nativeEndianness }));
    expect(nativeEndianness).toBe(new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 'little' : 'big');
  });

  it('refuses a message over the limit (1 MiB by default), counted in UTF-8 bytes', () => {
    expect(() => encodeLengthPrefixed('x'.repeat(1024 * 1024))).not.toThrow();
    expect(() => encodeLengthPrefixed('x'.repeat(1024 * 1024 + 1))).toThrow(FrameTooLargeError);
    expect(() => encodeLengthPrefixed('é'.repeat(3), { maxMessageBytes: 5 })).toThrow(FrameTooLargeError);
    expect(caught(() => encodeLengthPrefixed('abc', { maxMessageBytes: 2 }))).toMatchObject({
      code: 'ERR_FRAME_TOO_LARGE',
      length: 3,
      limit: 2,
      fatal: false,
    });
  });
});

describe('LengthPrefixedReadBuffer', () => {
  const little = { endian: 'little' as const };

  it('reads frames from a stream split one byte at a time', () => {
    const data = bytes(
      [...encodeLengthPrefixed('{"a":1}', little)],
      [...encodeLengthPrefixed('"€😀"', little)],
      [...encodeLengthPrefixed('[]', little)],
    );
    const r = new LengthPrefixedReadBuffer(little);
    expect(
      feed(
        r,
        [...data].map((b) => Uint8Array.of(b)),
      ),
    ).toEqual(['{"a":1}', '"€😀"', '[]']);
  });

  it('reads the byte order it is told to', () => {
    const r = new LengthPrefixedReadBuffer({ endian: 'big' });
    expect(feed(r, [bytes([0, 0, 0, 2], '{}')])).toEqual(['{}']);
  });

  it('treats a length over the limit as fatal and ignores what follows', () => {
    const r = new LengthPrefixedReadBuffer({ ...little, maxMessageBytes: 8 });
    r.append(bytes([2, 0, 0, 0], '{}', [9, 0, 0, 0], '{"a":123}', [2, 0, 0, 0], '{}'));
    expect(r.next()).toBe('{}');
    const error = caught(() => r.next());
    expect(error).toBeInstanceOf(FrameTooLargeError);
    expect(error).toMatchObject({ fatal: true, length: 9, limit: 8 });
    expect(r.failed).toBe(true);
    r.append(bytes([2, 0, 0, 0], '{}'));
    r.end();
    expect(r.next()).toBeUndefined();
  });

  it('refuses a huge declared length without allocating it', () => {
    const r = new LengthPrefixedReadBuffer(little);
    r.append(Uint8Array.of(0xff, 0xff, 0xff, 0xff));
    expect(() => r.next()).toThrow(FrameTooLargeError);
  });

  it('reports a frame cut off by the end of the stream', () => {
    const r = new LengthPrefixedReadBuffer(little);
    r.append(bytes([5, 0, 0, 0], '{}'));
    r.end();
    expect(() => r.next()).toThrow(TruncatedFrameError);
    expect(r.failed).toBe(true);
  });

  it('drops a frame that is not UTF-8 and reads on; yields an empty frame as ""', () => {
    const r = new LengthPrefixedReadBuffer(little);
    expect(feed(r, [bytes([1, 0, 0, 0], [0xff], [0, 0, 0, 0], [2, 0, 0, 0], '{}')])).toEqual([
      { error: 'ERR_INVALID_UTF8' },
      '',
      '{}',
    ]);
  });

  it('fuzz: any bytes, any chunking, agree with the model and throw only FramingError', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        cutPoints,
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        (data, cuts, max, isLittle) => {
          const options = { endian: isLittle ? ('little' as const) : ('big' as const), maxMessageBytes: max };
          const expected = lengthPrefixedModel(data, max, isLittle);
          expect(feed(new LengthPrefixedReadBuffer(options), split(data, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('fuzz: random small lengths and bodies (valid framing, random content) agree with the model', () => {
    const frame = fc.uint8Array({ maxLength: 12 }).map((body) => {
      const f = new Uint8Array(4 + body.length);
      new DataView(f.buffer).setUint32(0, body.length, true);
      f.set(body, 4);
      return [...f];
    });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 12 }), cutPoints, (frames, cuts) => {
        const data = Uint8Array.from(frames.flat());
        const expected = lengthPrefixedModel(data, 10, true);
        expect(feed(new LengthPrefixedReadBuffer({ ...little, maxMessageBytes: 10 }), split(data, cuts))).toEqual(
          expected,
        );
      }),
      { numRuns: 500 },
    );
  });

  it('fuzz: encoded messages come back exactly, however split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 10 }),
        cutPoints,
        (texts, cuts) => {
          const data = Uint8Array.from(texts.flatMap((t) => [...encodeLengthPrefixed(t, little)]));
          // TextEncoder turns a lone surrogate into U+FFFD; compare with what was really sent.
          const sent = texts.map((t) => new TextDecoder().decode(enc.encode(t)));
          expect(feed(new LengthPrefixedReadBuffer(little), split(data, cuts))).toEqual(sent);
        },
      ),
      { numRuns: 300 },
    );
  });
});
