import { type JsonRpcErrorObject, WmpError } from '@wmp/jsonrpc-envelope';

/**
 * Base of this package's local errors (never sent on the wire as such): a stable `code` to match
 * on and a fixed message that holds no peer data; a lower-level error is in `cause`. A peer's error
 * answer is a `WmpError` from @wmp/jsonrpc-envelope instead.
 */
export class SessionError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionError';
    this.code = code;
  }
}

export type PeerErrorCode =
  | 'ERR_CONNECTION_CLOSED'
  | 'ERR_REQUEST_TIMEOUT'
  | 'ERR_TOO_MANY_PENDING'
  | 'ERR_NOT_CONNECTED';

const PEER_MESSAGES: Readonly<Record<PeerErrorCode, string>> = {
  ERR_CONNECTION_CLOSED: 'connection closed',
  ERR_REQUEST_TIMEOUT: 'request timed out',
  ERR_TOO_MANY_PENDING: 'too many pending requests',
  ERR_NOT_CONNECTED: 'not connected',
};

/**
 * Local failures of an outgoing call: the connection closed, the call timed out, the caller
 * aborted it, or too many calls were pending.
 */
export class PeerError extends SessionError {
  declare readonly code: PeerErrorCode;
  constructor(code: PeerErrorCode) {
    super(code, PEER_MESSAGES[code]);
    this.name = 'PeerError';
  }
}

export class ConnectionClosedError extends PeerError {
  constructor() {
    super('ERR_CONNECTION_CLOSED');
    this.name = 'ConnectionClosedError';
  }
}

export class RequestTimeoutError extends PeerError {
  constructor() {
    super('ERR_REQUEST_TIMEOUT');
    this.name = 'RequestTimeoutError';
  }
}

/**
 * An error answer another peer gave, passed on unchanged (its code, message and data as they
 * were on the wire): a relay answers a routed request with the responder's own error.
 */
export class PassedError extends WmpError {
  readonly #wire: JsonRpcErrorObject;
  constructor(wire: JsonRpcErrorObject) {
    super(wire.code, wire.data, wire.message);
    this.name = 'PassedError';
    this.#wire = wire;
  }

  override toJsonRpc(): JsonRpcErrorObject {
    return this.#wire;
  }
}
