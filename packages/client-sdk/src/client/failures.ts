import { ErrorCode, WmpError } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError } from '@wmp/session';
import { HttpTransportError, WebSocketTransportError } from '@wmp/transports';

/**
 * The connection under a call is gone (or unusable): reconnecting may help, retrying may be safe.
 * Over HTTP, a server that closes while a POST waits answers it -32603 with `data.reason`
 * `closed`: the same thing.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof ConnectionClosedError || error instanceof WebSocketTransportError) return true;
  if (error instanceof HttpTransportError) return error.code !== 'ERR_HTTP_REPLY_TOO_LARGE';
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
