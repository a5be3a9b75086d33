/**
 * Base of every local error of the SDK: a stable `code` to match on and a fixed message that
 * carries no peer data (a lower-level error is in `cause`). A relay's or a peer's refusal is a
 * `WmpError` of @wmp/jsonrpc-envelope instead.
 */
export class ClientSdkError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClientSdkError';
    this.code = code;
  }
}
