import { type JsonRpcErrorObject, WmpError } from '@wmp/jsonrpc-envelope';

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
