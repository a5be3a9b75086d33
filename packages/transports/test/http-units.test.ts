import { DEFAULT_PARSE_LIMITS } from '@wmp/jsonrpc-envelope';
import { describe, expect, it, vi } from 'vitest';
import { AskedRequests } from '../src/http/http-asked.js';
import { classifyPostBody } from '../src/http/http-frames.js';
import { PendingPost } from '../src/http/http-pending.js';
import { acceptsEventStream, isJsonContentType, parseEventId } from '../src/http/http-protocol.js';
import { ReplayBuffer } from '../src/http/http-replay.js';
import { bearerToken, constantTimeEqual, createSessionToken } from '../src/http/http-token.js';

const limits = DEFAULT_PARSE_LIMITS;

describe('HTTP binding pieces', () => {
  it('makes 256-bit base64url tokens and compares them whole (a difference anywhere, or in length, is unequal)', () => {
    const a = createSessionToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createSessionToken()).not.toBe(a);
    expect(constantTimeEqual(a, a)).toBe(true);
    expect(constantTimeEqual(`${a.slice(0, -1)}${a.endsWith('A') ? 'B' : 'A'}`, a)).toBe(false);
    expect(constantTimeEqual(a.slice(1), a)).toBe(false);
    expect(constantTimeEqual(`${a}x`, a)).toBe(false);
    expect(constantTimeEqual('', a)).toBe(false);
    expect(bearerToken(`Bearer ${a}`)).toBe(a);
    expect(bearerToken(`bearer\t${a} `)).toBe(a);
    expect(bearerToken(`Basic ${a}`)).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
  });

  it('compares tokens without short-circuiting: every byte is read wherever the first difference is', () => {
    // Time cannot be asserted reliably; the work can. Count the byte reads of both encoded tokens.
    const a = createSessionToken();
    const flip = (i: number) => `${a.slice(0, i)}${a[i] === 'A' ? 'B' : 'A'}${a.slice(i + 1)}`;
    const encode = TextEncoder.prototype.encode;
    let reads: number[] = [];
    const spy = vi.spyOn(TextEncoder.prototype, 'encode').mockImplementation(function (this: TextEncoder, input) {
      const bytes = encode.call(this, input);
      const slot = reads.push(0) - 1;
      return new Proxy(bytes, {
        get(target, key) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads[slot]!++;
          return Reflect.get(target, key);
        },
      });
    });
    try {
      for (const presented of [a, flip(0), flip(21), flip(42), a.slice(1), `${a}x`, '']) {
        reads = [];
        constantTimeEqual(presented, a);
        expect(reads, JSON.stringify(presented)).toEqual([a.length, a.length]);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('reads Accept, Content-Type and event ids', () => {
    expect(acceptsEventStream('application/json, text/event-stream')).toBe(true);
    expect(acceptsEventStream('text/event-stream;q=0')).toBe(false);
    expect(acceptsEventStream('*/*')).toBe(false);
    expect(isJsonContentType('application/json; charset=utf-8')).toBe(true);
    expect(isJsonContentType('application/jsonrpc+json')).toBe(true);
    expect(isJsonContentType('text/plain')).toBe(false);
    expect(parseEventId('42')).toBe(42);
    expect(parseEventId('evt-7')).toBe(7);
    expect(parseEventId('abc')).toBeUndefined();
    expect(parseEventId('')).toBeUndefined();
  });

  it('classifies bodies as the Peer will answer them', () => {
    const req = (id: unknown, method = 'm') => ({ jsonrpc: '2.0', id, method });
    expect(classifyPostBody(JSON.stringify(req(1)), limits)).toMatchObject({ expected: [1], batch: false });
    expect(classifyPostBody('{"jsonrpc":"2.0","method":"n"}', limits).expected).toEqual([]);
    expect(classifyPostBody('{"jsonrpc":"2.0","id":"r","result":{}}', limits).expected).toEqual([]);
    expect(classifyPostBody('not json', limits)).toMatchObject({ expected: [null], batch: false });
    // The ids of a body of answers only (they may name no session: the binding finds who asked).
    expect(classifyPostBody('{"jsonrpc":"2.0","id":"r","result":{}}', limits).answers).toEqual(['r']);
    const answers = '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}]';
    expect(classifyPostBody(answers, limits).answers).toEqual([1, 2]);
    const mixed = '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]';
    expect(classifyPostBody(mixed, limits).answers).toEqual([]);
    expect(classifyPostBody(JSON.stringify(req(1)), limits).answers).toEqual([]);
    expect(classifyPostBody('{"id":5}', limits).expected).toEqual([null]); // invalid single: answered with id null
    expect(classifyPostBody('[]', limits)).toMatchObject({ expected: [null], batch: false });
    const batch = classifyPostBody(JSON.stringify([req('a'), { jsonrpc: '2.0', method: 'n' }, { id: 'x' }, 7]), limits);
    expect(batch).toMatchObject({ expected: ['a', 'x', null], batch: true });
    const named = classifyPostBody(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'wmp.session.resume', params: { wmp: { session_id: 'ses-1' } } }),
      limits,
    );
    expect(named).toMatchObject({ sessionId: 'ses-1', opensSession: true });
    // An integer past 2^53 in params: the Peer answers -32602 to the request's id (to none for a notification).
    const inexact =
      '{"jsonrpc":"2.0","id":4,"method":"m","params":{"wmp":{"session_id":"ses-2"},"n":9007199254740993}}';
    expect(classifyPostBody(inexact, limits)).toMatchObject({ expected: [4], sessionId: 'ses-2' });
    expect(classifyPostBody('{"jsonrpc":"2.0","method":"n","params":[9007199254740993]}', limits).expected).toEqual([]);
  });

  it('routes answers to the POST they belong to', async () => {
    const body = classifyPostBody(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'm' }, { x: 1 }]), limits);
    const post = new PendingPost(body, false, 1_000, () => undefined);
    expect(post.offer({ jsonrpc: '2.0', id: 2, result: {} }, '', undefined)).toBe(false);
    expect(post.offer({ jsonrpc: '2.0', method: 'progress' }, '', 1)).toBe(false); // not streaming
    const answers = [
      { jsonrpc: '2.0' as const, id: 1, result: {} },
      { jsonrpc: '2.0' as const, id: null, error: { code: -32600, message: 'Invalid Request' } },
    ];
    expect(post.offer(answers, JSON.stringify(answers), undefined)).toBe(true);
    expect(await post.done).toBe('complete');
    expect(post.reply()).toEqual(answers);
  });

  it('bounds the replay buffer by count and size', () => {
    const ring = new ReplayBuffer(3, 10);
    for (let seq = 1; seq <= 5; seq++) ring.push({ seq, data: 'ab' });
    expect(ring.after(0).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(ring.after(4).map((e) => e.seq)).toEqual([5]);
    ring.push({ seq: 6, data: '123456789' });
    expect(ring.after(0).map((e) => e.seq)).toEqual([6]);
  });

  it('knows which session each request of the server went to, within its bounds per session and in all', () => {
    const asked = new AskedRequests<string>(4, 2);
    asked.asked('a', 1);
    asked.asked('a', 2);
    expect(asked.sessionOf([1, 2])).toBe('a');
    // A third request of one session forgets its oldest.
    asked.asked('a', 3);
    expect(asked.sessionOf([1])).toBeUndefined();
    expect(asked.sessionOf([2, 3])).toBe('a');
    asked.asked('b', 4);
    asked.asked('b', 5);
    expect(asked.size).toBe(4);
    // Past the total, the oldest of all goes.
    asked.asked('c', 6);
    expect(asked.size).toBe(4);
    expect(asked.sessionOf([2])).toBeUndefined();
    // Ids of two sessions, or an unknown one, name none.
    expect(asked.sessionOf([3, 4])).toBeUndefined();
    expect(asked.sessionOf([9])).toBeUndefined();
    expect(asked.sessionOf([])).toBeUndefined();
    // Answered (by that session only), or the session ended: forgotten.
    asked.answered('a', [4]);
    expect(asked.sessionOf([4])).toBe('b');
    asked.answered('b', [4]);
    expect(asked.sessionOf([4])).toBeUndefined();
    asked.forget('b');
    expect(asked.sessionOf([5])).toBeUndefined();
    expect(asked.size).toBe(2);
  });
});
