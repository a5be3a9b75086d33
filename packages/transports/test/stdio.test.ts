import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { describe, expect, it, vi } from 'vitest';
import { InvalidUtf8Error, LineTooLongError } from '../src/index.js';
import { StdioTransport, StreamTransportError } from '../src/node.js';

function record(t: StdioTransport) {
  const seen = { frames: [] as (string | Uint8Array)[], errors: [] as Error[], closes: 0 };
  t.onmessage = (f) => seen.frames.push(f);
  t.onerror = (e) => seen.errors.push(e);
  t.onclose = () => seen.closes++;
  return seen;
}

function pipes(options: { closeStreams?: boolean; maxLineBytes?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new StdioTransport({ input, output, ...options });
  return { input, output, t, seen: record(t) };
}

const tick = () => new Promise((r) => setImmediate(r));
const request = (id: number, params: Record<string, unknown> = {}): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'wmp.ping',
  params,
});

describe('StdioTransport over PassThrough streams', () => {
  it('delivers each line as one frame, across chunk boundaries and CRLF', async () => {
    const { input, t, seen } = pipes();
    await t.start();
    input.write('{"jsonrpc":"2.0","id":1,');
    input.write('"method":"a"}\r\n\n{"jsonrpc":"2.0","method":"b"}\n');
    input.write(Buffer.from('"\u20ac"\n').subarray(0, 2));
    input.write(Buffer.from('"\u20ac"\n').subarray(2));
    await tick();
    expect(seen.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"a"}',
      '{"jsonrpc":"2.0","method":"b"}',
      '"\u20ac"',
    ]);
    expect(seen.errors).toEqual([]);
  });

  it('writes JSON plus a newline per message or batch', async () => {
    const { output, t } = pipes();
    await t.start();
    await t.send(request(1, { s: 'line\nbreak' }));
    await t.send([request(2), { jsonrpc: '2.0', method: 'n' }]);
    expect(output.read().toString()).toBe(
      '{"jsonrpc":"2.0","id":1,"method":"wmp.ping","params":{"s":"line\\nbreak"}}\n' +
        '[{"jsonrpc":"2.0","id":2,"method":"wmp.ping","params":{}},{"jsonrpc":"2.0","method":"n"}]\n',
    );
  });

  it('reports an over-long line, drops it and keeps going', async () => {
    const { input, t, seen } = pipes({ maxLineBytes: 32 });
    expect(t.maxMessageBytes).toBe(32);
    await t.start();
    input.write('{"a":1}\n' + 'x'.repeat(20));
    input.write('y'.repeat(100));
    input.write('z\n{"b":2}\n');
    await tick();
    expect(seen.frames).toEqual(['{"a":1}', '{"b":2}']);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toBeInstanceOf(LineTooLongError);
    expect(seen.closes).toBe(0);
    expect(t.closed).toBe(false);
  });

  it('reports a line that is not UTF-8 and keeps going', async () => {
    const { input, t, seen } = pipes();
    await t.start();
    input.write(Buffer.from([0x22, 0xff, 0x22, 0x0a]));
    input.write('{}\n');
    await tick();
    expect(seen.errors.map((e) => e.constructor)).toEqual([InvalidUtf8Error]);
    expect(seen.frames).toEqual(['{}']);
  });

  it('defaults to a 1 MiB line limit', async () => {
    const { input, t, seen } = pipes();
    expect(t.maxMessageBytes).toBe(1024 * 1024);
    await t.start();
    input.write('"' + 'a'.repeat(1024 * 1024 - 2) + '"\n');
    input.write('"' + 'a'.repeat(1024 * 1024 - 1) + '"\n');
    await tick();
    expect(seen.frames.map((f) => f.length)).toEqual([1024 * 1024]);
    expect(seen.errors.map((e) => e.constructor)).toEqual([LineTooLongError]);
  });

  it('closes once at end of input, delivering an unterminated last line first', async () => {
    const { input, t } = pipes();
    const order: string[] = [];
    t.onmessage = (f) => order.push(`message ${f}`);
    t.onclose = () => order.push('close');
    await t.start();
    input.end('{"a":1}\n{"b":2}');
    await vi.waitFor(() => expect(order).toContain('close'), { timeout: 10_000 });
    await t.close();
    expect(order).toEqual(['message {"a":1}', 'message {"b":2}', 'close']);
    await expect(t.send(request(1))).rejects.toMatchObject({ code: 'ERR_CLOSED' });
  });

  it('fires onclose exactly once however often and however it is closed', async () => {
    const { input, t, seen } = pipes();
    await t.start();
    await Promise.all([t.close(), t.close()]);
    input.end();
    input.destroy();
    await t.close();
    await tick();
    expect(seen.closes).toBe(1);
  });

  it('reports a stream error and closes', async () => {
    const { input, t, seen } = pipes();
    await t.start();
    input.destroy(new Error('boom'));
    await vi.waitFor(() => expect(seen.closes).toBe(1), { timeout: 10_000 });
    expect(seen.errors.map((e) => e.message)).toEqual(['boom']);
  });

  it('enforces the lifecycle with typed errors', async () => {
    const { t } = pipes();
    await expect(t.send(request(1))).rejects.toBeInstanceOf(StreamTransportError);
    await expect(t.send(request(1))).rejects.toMatchObject({ code: 'ERR_NOT_STARTED' });
    await t.start();
    await expect(t.start()).rejects.toMatchObject({ code: 'ERR_ALREADY_STARTED' });
    await t.close();
    await expect(t.send(request(1))).rejects.toMatchObject({ code: 'ERR_CLOSED' });
    await expect(t.start()).rejects.toMatchObject({ code: 'ERR_CLOSED' });
  });

  it('waits for drain under backpressure, and rejects waiting sends on close', async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 64 });
    const t = new StdioTransport({ input, output, closeTimeoutMs: 50 });
    await t.start();
    let sent = false;
    const big = t.send(request(1, { pad: 'x'.repeat(1000) })).then(() => {
      sent = true;
    });
    await tick();
    expect(sent).toBe(false);
    const received: Buffer[] = [];
    output.on('data', (c: Buffer) => received.push(c));
    await big;
    expect(sent).toBe(true);
    expect(JSON.parse(Buffer.concat(received).toString())).toEqual(request(1, { pad: 'x'.repeat(1000) }));

    output.pause();
    const before = output.listenerCount('drain');
    const stuck = [t.send(request(2, { pad: 'y'.repeat(1000) })), t.send(request(3))].map((p) =>
      p.then(
        () => 'sent',
        (e: unknown) => e,
      ),
    );
    expect(output.listenerCount('drain')).toBe(before + 1); // one shared wait for both sends
    // The paused reader never drains: close() gives up after closeTimeoutMs and destroys it.
    await t.close();
    expect(output.destroyed).toBe(true);
    expect(output.listenerCount('drain')).toBe(before);
    for (const s of stuck) expect(await s).toMatchObject({ code: 'ERR_CLOSED' });
  });

  it('reports a throwing onmessage and keeps delivering', async () => {
    const { input, t, seen } = pipes();
    t.onmessage = (f) => {
      if (f === '1') throw new Error('handler failed');
      seen.frames.push(f);
    };
    await t.start();
    input.write('1\n2\n');
    await tick();
    expect(seen.frames).toEqual(['2']);
    expect(seen.errors.map((e) => e.message)).toEqual(['handler failed']);
  });

  it('ends streams it was given on close, unless told not to', async () => {
    const owned = pipes();
    await owned.t.start();
    await owned.t.close();
    expect(owned.output.writableEnded).toBe(true);
    expect(owned.input.destroyed).toBe(true);

    const borrowed = pipes({ closeStreams: false });
    await borrowed.t.start();
    await borrowed.t.close();
    expect(borrowed.output.writableEnded).toBe(false);
    expect(borrowed.input.destroyed).toBe(false);
    expect(borrowed.input.listenerCount('data')).toBe(0);
  });

  it('defaults to process.stdin and process.stdout and never ends them', async () => {
    const t = new StdioTransport();
    await t.start();
    expect(process.stdin.listenerCount('data')).toBeGreaterThan(0);
    await t.close();
    expect(process.stdout.writableEnded).toBe(false);
    expect(process.stdin.destroyed).toBe(false);
  });
});

describe('StdioTransport over real pipes to a child process', () => {
  const script = fileURLToPath(new URL('./fixtures/ndjson-echo.mjs', import.meta.url));

  it('exchanges messages with a child, through backpressure, and ends it on close', async () => {
    const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    const t = new StdioTransport({ input: child.stdout, output: child.stdin });
    const seen = record(t);
    await t.start();

    await t.send(request(1, { text: 'h\u00e9llo \u{1f600}' }));
    await vi.waitFor(() => expect(seen.frames).toHaveLength(1), { timeout: 10_000 });
    expect(JSON.parse(seen.frames[0] as string)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { echo: { text: 'h\u00e9llo \u{1f600}' } },
    });

    // ~8 MiB, far more than a pipe buffer holds: sends must wait for 'drain' and stay in order.
    const pad = 'p'.repeat(64 * 1024);
    const count = 128;
    const sends = Array.from({ length: count }, (_, i) => t.send(request(i + 2, { pad })));
    await Promise.all(sends);
    await vi.waitFor(() => expect(seen.frames).toHaveLength(count + 1), { timeout: 15_000 });
    const ids = seen.frames.slice(1).map((f) => (JSON.parse(f as string) as { id: number }).id);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i + 2));
    expect(seen.errors).toEqual([]);

    await t.close();
    const [code] = await exited;
    expect(code).toBe(0);
    expect(seen.closes).toBe(1);
  });

  it('closes when the child exits', async () => {
    const child = spawn(process.execPath, ['-e', 'process.stdout.write(\'{"jsonrpc":"2.0","method":"bye"}\\n\')']);
    const t = new StdioTransport({ input: child.stdout, output: child.stdin });
    const seen = record(t);
    await t.start();
    await vi.waitFor(() => expect(seen.closes).toBe(1), { timeout: 10_000 });
    expect(seen.frames).toEqual(['{"jsonrpc":"2.0","method":"bye"}']);
    await expect(t.send(request(1))).rejects.toMatchObject({ code: 'ERR_CLOSED' });
  });
});
