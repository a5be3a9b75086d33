import { describe, expect, it } from 'vitest';
import { formatSseEvent, type SseEvent, SseParseError, SseParser } from '../src/index.js';

/** Feeds `chunks` to a fresh parser and returns every event. */
function parse(chunks: readonly string[], parser = new SseParser()): SseEvent[] {
  return chunks.flatMap((c) => parser.push(c));
}

const STREAM =
  ': hello\n' +
  'retry: 2500\n' +
  'event: wmp\nid: 1\ndata: {"jsonrpc":"2.0","method":"a"}\n\n' +
  'data: first line\ndata: second line\n\n' +
  'id: 7\nevent: other\ndata:no-space\n\n' +
  'data: \u20ac and \ud83d\ude00\n\n';

const EXPECTED: SseEvent[] = [
  { event: 'wmp', id: '1', data: '{"jsonrpc":"2.0","method":"a"}' },
  { event: 'message', id: '1', data: 'first line\nsecond line' },
  { event: 'other', id: '7', data: 'no-space' },
  { event: 'message', id: '7', data: '\u20ac and \ud83d\ude00' },
];

describe('SseParser (HTML event-stream rules)', () => {
  it('parses event, id, data fields, comments and the default message type', () => {
    const parser = new SseParser();
    expect(parse([STREAM], parser)).toEqual(EXPECTED);
    expect(parser.retry).toBe(2500);
    expect(parser.lastEventId).toBe('7');
  });

  it('gives the same events for every split of the stream into two chunks', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(parse([STREAM.slice(0, i), STREAM.slice(i)])).toEqual(EXPECTED);
    }
  });

  it('gives the same events one character at a time', () => {
    expect(parse([...STREAM])).toEqual(EXPECTED);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('accepts %s line endings, split anywhere', (_name, eol) => {
    const text = STREAM.replace(/\n/g, eol);
    expect(parse([text])).toEqual(EXPECTED);
    for (let i = 0; i <= text.length; i++) expect(parse([text.slice(0, i), text.slice(i)])).toEqual(EXPECTED);
  });

  it('does not read a CRLF split across chunks as two line ends', () => {
    // With the bug, the LF would be a blank line and dispatch "a" alone.
    expect(parse(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([{ event: 'message', id: '', data: 'a\nb' }]);
  });

  it('mixes line endings in one stream', () => {
    expect(parse(['data: a\rdata: b\r\ndata: c\n\r\n'])).toEqual([{ event: 'message', id: '', data: 'a\nb\nc' }]);
  });

  it('ignores comments, unknown fields, and events without data', () => {
    expect(parse([':keep-alive\n\n', 'foo: bar\n\n', 'event: wmp\n\n', 'data: x\n\n'])).toEqual([
      { event: 'message', id: '', data: 'x' },
    ]);
  });

  it('takes a field without a colon as an empty value, and strips one space only', () => {
    expect(parse(['data\n\n', 'data:  two spaces\n\n'])).toEqual([
      { event: 'message', id: '', data: '' },
      { event: 'message', id: '', data: ' two spaces' },
    ]);
  });

  it('keeps the last event id across events, resets it on an empty id, ignores ids with NUL', () => {
    const parser = new SseParser({ lastEventId: 'prev' });
    expect(parse(['data: a\n\n', 'id: 3\ndata: b\n\n', 'id: x\0y\ndata: c\n\n', 'id\ndata: d\n\n'], parser)).toEqual([
      { event: 'message', id: 'prev', data: 'a' },
      { event: 'message', id: '3', data: 'b' },
      { event: 'message', id: '3', data: 'c' },
      { event: 'message', id: '', data: 'd' },
    ]);
  });

  it('takes retry only when it is all digits', () => {
    const parser = new SseParser();
    parse(['retry: 10\n', 'retry: 12x\n', 'retry: -5\n', 'retry:\n\n'], parser);
    expect(parser.retry).toBe(10);
  });

  it('drops a leading BOM once', () => {
    expect(parse(['\ufeffdata: a\n\n'])).toEqual([{ event: 'message', id: '', data: 'a' }]);
    expect(parse(['\ufeff', 'data: a\n\n'])).toEqual([{ event: 'message', id: '', data: 'a' }]);
  });

  it('discards an event cut off by the end of the stream', () => {
    const parser = new SseParser();
    expect(parse(['id: 4\ndata: complete\n\ndata: cut', ' off\n'], parser)).toHaveLength(1);
    parser.end();
    expect(parser.push('\n')).toEqual([]);
    expect(parser.lastEventId).toBe('4');
  });

  it('bounds a line and an event', () => {
    expect(() => new SseParser({ maxEventChars: 10 }).push('data: 0123456789')).toThrow(SseParseError);
    const parser = new SseParser({ maxEventChars: 10 });
    parser.push('data: 01234\n');
    expect(() => parser.push('data: 56789\n')).toThrow(SseParseError);
  });

  it('reads back what formatSseEvent writes, including multi-line data', () => {
    const text =
      formatSseEvent({ event: 'wmp', id: 42, data: '{"a":1}' }) +
      formatSseEvent({ data: 'one\r\ntwo\rthree\nfour' }) +
      formatSseEvent({ event: 'x\ny', id: 'a\rb', data: '' });
    expect(parse([text])).toEqual([
      { event: 'wmp', id: '42', data: '{"a":1}' },
      { event: 'message', id: '42', data: 'one\ntwo\nthree\nfour' },
      { event: 'xy', id: 'ab', data: '' },
    ]);
  });
});
