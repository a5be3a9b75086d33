// One definition of a lost connection: the SDK's `isConnectionLost` (what its reconnects go by)
// and the CLI's "relay unreachable" (exit 4) agree on every code of the layers below.
import { isConnectionLost, ReconnectFailedError } from '@wmp/client-sdk';
import { errorFromJsonRpc } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError, PeerError, RequestTimeoutError } from '@wmp/session';
import {
  HttpStatusError,
  HttpTransportError,
  type HttpTransportErrorCode,
  WebSocketTransportError,
  type WebSocketTransportErrorCode,
} from '@wmp/transports';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../src/errors.js';
import { isUnreachable, toCliError } from '../src/to-cli-error.js';

/** Lost or not, per code: a record per family, so that a new code must be added here. */
const WEBSOCKET: Record<WebSocketTransportErrorCode, boolean> = {
  ERR_WS_INSECURE_URL: false,
  ERR_WS_UNAVAILABLE: false,
  ERR_WS_ALREADY_STARTED: false,
  ERR_WS_CONNECT: true,
  ERR_WS_NOT_OPEN: true,
  ERR_WS_BINARY_FRAME: true,
  ERR_WS_PONG_TIMEOUT: true,
  ERR_WS_SLOW_CONSUMER: true,
  ERR_WS_SOCKET: true,
};
const HTTP: Record<HttpTransportErrorCode, boolean> = {
  ERR_HTTP_INSECURE_URL: false,
  ERR_HTTP_ALREADY_STARTED: false,
  ERR_HTTP_CLOSED: true,
  ERR_HTTP_FETCH: true,
  ERR_HTTP_STATUS: true,
  ERR_HTTP_REPLY_TOO_LARGE: false,
  ERR_HTTP_EVENTS_GAVE_UP: true,
};

const rows: [string, Error, boolean][] = [
  ...Object.entries(WEBSOCKET).map(([code, lost]): [string, Error, boolean] => [
    code,
    new WebSocketTransportError(code as WebSocketTransportErrorCode),
    lost,
  ]),
  ...Object.entries(HTTP).map(([code, lost]): [string, Error, boolean] => [
    code,
    code === 'ERR_HTTP_STATUS' ? new HttpStatusError(502) : new HttpTransportError(code as HttpTransportErrorCode),
    lost,
  ]),
  ['ERR_CONNECTION_CLOSED', new ConnectionClosedError(), true],
  ['ERR_NOT_CONNECTED', new PeerError('ERR_NOT_CONNECTED'), true],
  ['ERR_TOO_MANY_PENDING', new PeerError('ERR_TOO_MANY_PENDING'), false],
  ['ERR_REQUEST_TIMEOUT', new RequestTimeoutError(), false],
  ['ERR_RECONNECT_FAILED', new ReconnectFailedError(3, new ConnectionClosedError()), false],
  ['-32603 closed', errorFromJsonRpc({ code: -32603, message: 'Internal error', data: { reason: 'closed' } }), true],
  ['-32603', errorFromJsonRpc({ code: -32603, message: 'Internal error' }), false],
  ['-31000', errorFromJsonRpc({ code: -31000, message: 'Session not found' }), false],
];

/** Not a lost connection, yet the relay did not answer: the CLI says "could not reach" for these too. */
const NO_ANSWER = new Set(['ERR_REQUEST_TIMEOUT', 'ERR_RECONNECT_FAILED']);

describe('a lost connection, for the SDK and the CLI', () => {
  it.each(rows)('%s: lost %s', (code, error, lost) => {
    expect(isConnectionLost(error)).toBe(lost);
    const unreachable = lost || NO_ANSWER.has(code);
    expect(isUnreachable(error)).toBe(unreachable);
    expect(toCliError(error).exitCode === ExitCode.unreachable).toBe(unreachable);
    // Wrapped (a ReconnectFailedError's cause, an SDK error's): the CLI still finds it.
    expect(isUnreachable(new Error('wrapped', { cause: error }))).toBe(unreachable);
  });

  it('names the lost connection in the CLI error', () => {
    expect(toCliError(new WebSocketTransportError('ERR_WS_SLOW_CONSUMER'))).toMatchObject({
      code: 'unreachable',
      message: 'relay unreachable (ERR_WS_SLOW_CONSUMER)',
      details: { cause: 'ERR_WS_SLOW_CONSUMER' },
    });
    const closed = errorFromJsonRpc({ code: -32603, message: 'Internal error', data: { reason: 'closed' } });
    expect(toCliError(closed)).toMatchObject({ code: 'unreachable', message: 'relay unreachable (closed)' });
  });
});
