/** Why an identity could not be made or read. */
export type IdentityErrorCode =
  | 'ERR_IDENTITY_INVALID'
  /** An X.509 identity handed to the synchronous `fromJSON`: read it with `Identity.restore`. */
  | 'ERR_IDENTITY_NEEDS_RESTORE';

/** A refused identity (malformed JSON, wrong key sizes, a DID that does not match the key). */
export class IdentityError extends Error {
  readonly code: IdentityErrorCode;
  constructor(code: IdentityErrorCode = 'ERR_IDENTITY_INVALID') {
    super('not a valid identity');
    this.name = 'IdentityError';
    this.code = code;
  }
}
