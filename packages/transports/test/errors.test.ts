// Every error of this package is one family: a TransportError with a stable code and a fixed
// message (no peer data), whichever binding it comes from.
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../../test-support/code-of.js';
import { expectErrorFamily } from '../../../test-support/error-family.js';
import {
  FrameTooLargeError,
  HttpStatusError,
  HttpTransportError,
  InvalidUtf8Error,
  LineTooLongError,
  NdjsonReadBuffer,
  ReconnectFailedError,
  SseParseError,
  StreamTransportError,
  TransportError,
  TruncatedFrameError,
  UnixSocketError,
  WebSocketClientTransport,
  WebSocketTransportError,
} from '../src/node.js';

describe('the transport errors', () => {
  it('all extend TransportError, each with its stable code and a fixed message', () => {
    expectErrorFamily(TransportError, [
      [new LineTooLongError(10), 'ERR_LINE_TOO_LONG', 'line too long'],
      [new FrameTooLargeError(99, 10), 'ERR_FRAME_TOO_LARGE', 'frame too large'],
      [new InvalidUtf8Error(), 'ERR_INVALID_UTF8', 'frame is not valid UTF-8'],
      [new TruncatedFrameError(), 'ERR_TRUNCATED_FRAME', 'stream ended inside a frame'],
      [new HttpTransportError('ERR_HTTP_CLOSED'), 'ERR_HTTP_CLOSED', 'transport closed'],
      [new HttpStatusError(502), 'ERR_HTTP_STATUS', 'HTTP error status'],
      [new WebSocketTransportError('ERR_WS_NOT_OPEN'), 'ERR_WS_NOT_OPEN', 'WebSocket is not open'],
      [new ReconnectFailedError(3, new Error('ECONNREFUSED 10.0.0.7')), 'ERR_RECONNECT_FAILED', 'reconnection failed'],
      [new SseParseError(), 'ERR_SSE_TOO_LARGE', 'server-sent event too large'],
      [new StreamTransportError('ERR_NOT_STARTED'), 'ERR_NOT_STARTED', 'transport not started'],
      [
        new UnixSocketError('ERR_PATH_TOO_LONG', 'socket path too long', '/tmp/x'),
        'ERR_PATH_TOO_LONG',
        'socket path too long',
      ],
    ]);
  });

  it('are what the bindings throw and report', async () => {
    const url = 'ws://relay.example/wmp';
    expect(await codeOf(() => new WebSocketClientTransport({ url }), TransportError)).toBe('ERR_WS_INSECURE_URL');
    const lines = new NdjsonReadBuffer({ maxLineBytes: 4 });
    lines.append(new TextEncoder().encode('{"jsonrpc":"2.0"}\n'));
    expect(await codeOf(() => lines.next(), TransportError)).toBe('ERR_LINE_TOO_LONG');
  });
});
