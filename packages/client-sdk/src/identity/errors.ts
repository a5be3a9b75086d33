import { ClientSdkError } from '../errors.js';

/** Why an identity could not be made or read. */
export type IdentityErrorCode =
  | 'ERR_IDENTITY_INVALID'
  /** An X.509 identity handed to the synchronous `fromJSON`: read it with `Identity.restore`. */
  | 'ERR_IDENTITY_NEEDS_RESTORE';

const MESSAGES: Readonly<Record<IdentityErrorCode, string>> = Object.freeze({
  ERR_IDENTITY_INVALID: 'not a valid identity',
  ERR_IDENTITY_NEEDS_RESTORE: 'an X.509 identity is read with Identity.restore',
});

/** A refused identity (malformed JSON, wrong key sizes, a DID that does not match the key). */
export class IdentityError extends ClientSdkError {
  declare readonly code: IdentityErrorCode;
  constructor(code: IdentityErrorCode = 'ERR_IDENTITY_INVALID') {
    super(code, MESSAGES[code]);
    this.name = 'IdentityError';
  }
}
