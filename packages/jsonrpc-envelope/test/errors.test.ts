import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  ErrorMessage,
  errorForCode,
  errorFromJsonRpc,
  InternalError,
  QueueFullError,
  toWmpError,
  WmpError,
} from '../src/index.js';

describe('error catalogue', () => {
  it('covers -32700..-32603 and -31000..-31018 with canonical messages', () => {
    const codes = Object.values(ErrorCode).sort((a, b) => a - b);
    expect(codes).toEqual(
      [...Array.from({ length: 19 }, (_, i) => -31018 + i), -32603, -32602, -32601, -32600, -32700].sort(
        (a, b) => a - b,
      ),
    );
    expect(ErrorMessage[-31014]).toBe('Queue full');
    expect(ErrorMessage[-32600]).toBe('Invalid Request');
  });

  it('has one subclass per code, each with the canonical message and its data', () => {
    for (const code of Object.values(ErrorCode)) {
      const e = errorForCode(code, { reason: 'x' });
      expect(e).toBeInstanceOf(WmpError);
      expect(e.constructor).not.toBe(WmpError);
      expect(e.message).toBe(ErrorMessage[code]);
      expect(e.toJsonRpc()).toEqual({ code, message: ErrorMessage[code], data: { reason: 'x' } });
    }
    const full = new QueueFullError();
    expect(full).toBeInstanceOf(QueueFullError);
    expect(full.name).toBe('QueueFullError');
    expect(full.toResponse('r1')).toEqual({ jsonrpc: '2.0', id: 'r1', error: { code: -31014, message: 'Queue full' } });
  });

  it('rebuilds a peer error: known codes get the canonical message, others keep theirs', () => {
    const known = errorFromJsonRpc({ code: -31005, message: 'Resolution type not supported', data: { type: 'smp' } });
    expect(known.message).toBe('Capability not supported');
    expect(known.data).toEqual({ type: 'smp' });
    const app = errorFromJsonRpc({ code: -32000, message: 'app specific' });
    expect(app.toJsonRpc()).toEqual({ code: -32000, message: 'app specific' });
  });

  it('turns any thrown value into a WmpError without leaking internals', () => {
    const e = toWmpError(new Error('database password is hunter2'));
    expect(e).toBeInstanceOf(InternalError);
    expect(JSON.stringify(e.toJsonRpc())).not.toContain('hunter2');
    const q = new QueueFullError();
    expect(toWmpError(q)).toBe(q);
  });
});
