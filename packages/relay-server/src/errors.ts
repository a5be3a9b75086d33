/**
 * Base of this package's own errors: a stable `code` to match on and a fixed message that holds no
 * client data (a lower-level error is in `cause`, for the logs). What a peer is answered on the
 * wire is a `WmpError` of @wmp/jsonrpc-envelope; what the box answers is a `BoxApiError` (one of
 * these, whose `toJSON()` is the answer).
 */
export class RelayServerError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RelayServerError';
    this.code = code;
  }
}
