/**
 * Errors of this package that never go on the wire as such. Signature and challenge failures are
 * WMP errors (`SignatureInvalidError`, `NotAuthorizedError`, `TimestampInvalidError` from
 * @wmp/jsonrpc-envelope), because that is what a peer answers with.
 */
export class JcsSigningError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JcsSigningError';
    this.code = code;
  }
}

/** A key or identifier that does not decode to a usable key. */
export class InvalidKeyError extends JcsSigningError {
  /** True when the key decodes but is weak (small order): callers report that distinctly. */
  readonly weak: boolean;
  constructor(message = 'invalid key', weak = false) {
    super('ERR_INVALID_KEY', message);
    this.name = 'InvalidKeyError';
    this.weak = weak;
  }
}

/** A value that RFC 8785 cannot canonicalize exactly (non-finite number, unsafe integer, lone surrogate). */
export class CanonicalizationError extends JcsSigningError {
  constructor(message = 'value cannot be canonicalized') {
    super('ERR_JCS', message);
    this.name = 'CanonicalizationError';
  }
}
