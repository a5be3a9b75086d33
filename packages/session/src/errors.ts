/**
 * Local failures of an outgoing call (never sent on the wire): the connection closed, the call
 * timed out, the caller aborted it, or too many calls were pending. A peer's error answer is a
 * `WmpError` from @wmp/jsonrpc-envelope instead.
 */
export class PeerError extends Error {
  readonly code: 'ERR_CONNECTION_CLOSED' | 'ERR_REQUEST_TIMEOUT' | 'ERR_TOO_MANY_PENDING' | 'ERR_NOT_CONNECTED';
  constructor(code: PeerError['code'], message: string) {
    super(message);
    this.name = 'PeerError';
    this.code = code;
  }
}

export class ConnectionClosedError extends PeerError {
  constructor() {
    super('ERR_CONNECTION_CLOSED', 'connection closed');
    this.name = 'ConnectionClosedError';
  }
}

export class RequestTimeoutError extends PeerError {
  constructor() {
    super('ERR_REQUEST_TIMEOUT', 'request timed out');
    this.name = 'RequestTimeoutError';
  }
}
