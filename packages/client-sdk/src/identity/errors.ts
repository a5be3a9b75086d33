/** Why an identity could not be made or read. */
export type IdentityErrorCode =
  | 'invalid_identity'
  /** An X.509 identity handed to the synchronous `fromJSON`: read it with `Identity.restore`. */
  | 'needs_restore';

/** A refused identity (malformed JSON, wrong key sizes, a DID that does not match the key). */
export class IdentityError extends Error {
  readonly code: IdentityErrorCode;
  constructor(code: IdentityErrorCode = 'invalid_identity') {
    super('not a valid identity');
    this.name = 'IdentityError';
    this.code = code;
  }
}
