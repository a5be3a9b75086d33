import { PassThrough } from 'node:stream';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { describe, expect, it, vi } from 'vitest';
import { encodeLengthPrefixed, FrameTooLargeError, TruncatedFrameError } from '../src/index.js';
import { NativeMessagingTransport, nativeMessagingCaller } from '../src/node.js';

function host(options: { maxMessageBytes?: number; maxOutgoingBytes?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new NativeMessagingTransport({ input, output, endian: 'little', ...options });
  const seen = { frames: [] as (string | Uint8Array)[], errors: [] as Error[], closes: 0 };
  t.onmessage = (f) => seen.frames.push(f);
  t.onerror = (e) => seen.errors.push(e);
  t.onclose = () => seen.closes++;
  return { input, output, t, seen };
}

const tick = () => new Promise((r) => setImmediate(r));
const le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24];
const ascii = (s: string) => [...Buffer.from(s, 'utf8')];

describe('NativeMessagingTransport', () => {
  it('sends a little-endian length prefix and the UTF-8 JSON, byte for byte', async () => {
    const { output, t } = host();
    await t.start();
    const message: JsonRpcMessage = { jsonrpc: '2.0', id: 'r1', result: { s: '\u00e9' } };
    await t.send(message);
    const json = '{"jsonrpc":"2.0","id":"r1","result":{"s":"\u00e9"}}';
    const expected = [...le(Buffer.byteLength(json)), ...ascii(json)];
    expect(expected.slice(0, 4)).toEqual([47, 0, 0, 0]);
    expect([...(output.read() as Buffer)]).toEqual(expected);
  });

  it('uses the platform byte order by default', async () => {
    const output = new PassThrough();
    const t = new NativeMessagingTransport({ input: new PassThrough(), output });
    await t.start();
    await t.send({ jsonrpc: '2.0', method: 'x' });
    const prefix = (output.read() as Buffer).subarray(0, 4);
    const length = Buffer.byteLength('{"jsonrpc":"2.0","method":"x"}');
    expect(new Uint32Array(Uint8Array.from(prefix).buffer)[0]).toBe(length);
  });

  it('reads frames from a stream split at every byte and at random points', async () => {
    const texts = ['{"jsonrpc":"2.0","id":1,"method":"a"}', '{"jsonrpc":"2.0","method":"\u20ac\u{1f600}"}', '[]'];
    const data = Buffer.concat(texts.map((x) => encodeLengthPrefixed(x, { endian: 'little' })));
    const { input, t, seen } = host();
    await t.start();
    for (const b of data) input.write(Buffer.of(b));
    let at = 0;
    for (const size of [3, 1, 7, 50, 2, 1000]) {
      input.write(data.subarray(at, at + size));
      at += size;
    }
    await tick();
    expect(seen.frames).toEqual([...texts, ...texts]);
    expect(seen.errors).toEqual([]);
  });

  it('treats a length over the limit as fatal: onerror, then onclose', async () => {
    const { input, t, seen } = host({ maxMessageBytes: 16 });
    expect(t.maxMessageBytes).toBe(16);
    await t.start();
    input.write(Buffer.from([...le(2), ...ascii('{}'), ...le(17), ...ascii('x'.repeat(17)), ...le(2), ...ascii('[]')]));
    await vi.waitFor(() => expect(seen.closes).toBe(1));
    expect(seen.frames).toEqual(['{}']);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toBeInstanceOf(FrameTooLargeError);
    await expect(t.send({ jsonrpc: '2.0', method: 'x' })).rejects.toMatchObject({ code: 'ERR_CLOSED' });
  });

  it('refuses to send over the outgoing limit and stays open', async () => {
    const { output, t, seen } = host({ maxOutgoingBytes: 40 });
    await t.start();
    await expect(t.send({ jsonrpc: '2.0', method: 'x', params: { pad: 'y'.repeat(40) } })).rejects.toBeInstanceOf(
      FrameTooLargeError,
    );
    expect(output.read()).toBeNull();
    await t.send({ jsonrpc: '2.0', method: 'x' });
    expect((output.read() as Buffer).length).toBe(4 + 30);
    expect(seen.closes).toBe(0);
  });

  it('defaults to 1 MiB outgoing, as Chrome allows', async () => {
    const { output, t } = host();
    output.resume(); // a reader, so the 1 MiB frame does not wait on backpressure
    await t.start();
    expect(t.maxOutgoingBytes).toBe(1024 * 1024);
    const base = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { p: '' } }));
    await expect(
      t.send({ jsonrpc: '2.0', method: 'x', params: { p: 'z'.repeat(1024 * 1024 - base) } }),
    ).resolves.toBeUndefined();
    await expect(
      t.send({ jsonrpc: '2.0', method: 'x', params: { p: 'z'.repeat(1024 * 1024 - base + 1) } }),
    ).rejects.toBeInstanceOf(FrameTooLargeError);
  });

  it('reports a frame cut off by the end of input and closes', async () => {
    const { input, t, seen } = host();
    await t.start();
    input.end(Buffer.from([...le(10), ...ascii('{}')]));
    await vi.waitFor(() => expect(seen.closes).toBe(1));
    expect(seen.errors.map((e) => e.constructor)).toEqual([TruncatedFrameError]);
  });

  it('closes cleanly at end of input between frames', async () => {
    const { input, t, seen } = host();
    await t.start();
    input.end(Buffer.from([...le(2), ...ascii('{}')]));
    await vi.waitFor(() => expect(seen.closes).toBe(1));
    expect(seen.frames).toEqual(['{}']);
    expect(seen.errors).toEqual([]);
  });
});

describe('nativeMessagingCaller', () => {
  it('reads the Chromium origin', () => {
    const id = 'abcdefghijklmnopabcdefghijklmnop';
    expect(nativeMessagingCaller([`chrome-extension://${id}/`, '--parent-window=0'])).toEqual({
      browser: 'chromium',
      origin: `chrome-extension://${id}/`,
      extensionId: id,
    });
  });

  it('reads the Firefox manifest path and add-on ID', () => {
    expect(nativeMessagingCaller(['/usr/lib/mozilla/native-messaging-hosts/wmp.json', 'wallet@example.org'])).toEqual({
      browser: 'firefox',
      manifestPath: '/usr/lib/mozilla/native-messaging-hosts/wmp.json',
      extensionId: 'wallet@example.org',
    });
  });

  it('returns undefined for anything else', () => {
    expect(nativeMessagingCaller([])).toBeUndefined();
    expect(nativeMessagingCaller(['chrome-extension://short/'])).toBeUndefined();
    expect(nativeMessagingCaller(['--verbose'])).toBeUndefined();
    expect(nativeMessagingCaller(['/x/manifest.json'])).toBeUndefined();
  });
});
