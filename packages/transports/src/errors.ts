/**
 * Base of every error this package throws or reports: a stable `code` (what callers match on) and
 * a fixed message that carries no peer data; a lower-level error is in `cause`. A peer's own error
 * answer is a `WmpError` from @wmp/jsonrpc-envelope instead.
 */
export class TransportError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
    this.code = code;
  }
}
