import { ErrorCode, WmpError } from '@wmp/jsonrpc-envelope';
import { PeerError } from '@wmp/session';
import {
  HttpTransportError,
  type HttpTransportErrorCode,
  WebSocketTransportError,
  type WebSocketTransportErrorCode,
} from '@wmp/transports';

// Whether each code of the layers below means a lost connection. A record per family, so that a
// code added there must be decided here.

const WEBSOCKET_LOST: Readonly<Record<WebSocketTransportErrorCode, boolean>> = {
  ERR_WS_INSECURE_URL: false,
  ERR_WS_UNAVAILABLE: false,
  ERR_WS_ALREADY_STARTED: false,
  ERR_WS_CONNECT: true,
  ERR_WS_NOT_OPEN: true,
  // The transport closes the connection over these.
  ERR_WS_BINARY_FRAME: true,
  ERR_WS_PONG_TIMEOUT: true,
  ERR_WS_SLOW_CONSUMER: true,
  ERR_WS_SOCKET: true,
};

const HTTP_LOST: Readonly<Record<HttpTransportErrorCode, boolean>> = {
  ERR_HTTP_INSECURE_URL: false,
  ERR_HTTP_ALREADY_STARTED: false,
  ERR_HTTP_CLOSED: true,
  ERR_HTTP_FETCH: true,
  // A refusal without a JSON-RPC answer (a proxy in front of a restarting relay): the resume tells.
  ERR_HTTP_STATUS: true,
  // The relay answered: the answer is too large, reconnecting does not change it.
  ERR_HTTP_REPLY_TOO_LARGE: false,
  ERR_HTTP_EVENTS_GAVE_UP: true,
};

const PEER_LOST: Readonly<Record<PeerError['code'], boolean>> = {
  ERR_CONNECTION_CLOSED: true,
  ERR_NOT_CONNECTED: true,
  // The connection may be fine: a call that may be made twice (a send) decides for itself.
  ERR_REQUEST_TIMEOUT: false,
  ERR_TOO_MANY_PENDING: false,
};

/**
 * The connection under a call is gone, or could not be made: reconnecting may help, and the call
 * may be made again. The one definition for the client's reconnects and for applications (the
 * wmp CLI's "could not reach the relay"). Over HTTP, a server that closes while a POST waits
 * answers it -32603 with `data.reason` `closed`: the same thing. Looks at `error` itself, not at
 * its `cause`s; a `ReconnectFailedError` (the client gave up) is not one.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof WebSocketTransportError) return WEBSOCKET_LOST[error.code] === true;
  if (error instanceof HttpTransportError) return HTTP_LOST[error.code] === true;
  if (error instanceof PeerError) return PEER_LOST[error.code] === true;
  return (
    error instanceof WmpError &&
    error.code === ErrorCode.InternalError &&
    (error.data as { reason?: unknown } | undefined)?.reason === 'closed'
  );
}

/**
 * The session the call named is unknown or expired (-31000, -31001). Over HTTP this is also how
 * a restarted relay answers for a connection it no longer knows, so the client reconnects: the
 * resume then tells whether the session itself is gone.
 */
export function isSessionGone(error: unknown): boolean {
  return (
    error instanceof WmpError && (error.code === ErrorCode.SessionNotFound || error.code === ErrorCode.SessionExpired)
  );
}

/** A resume refused for good: the session is unknown, expired, or the token is not valid. */
export function isResumeRefused(error: unknown): boolean {
  return isSessionGone(error) || (error instanceof WmpError && error.code === ErrorCode.NotAuthorized);
}
