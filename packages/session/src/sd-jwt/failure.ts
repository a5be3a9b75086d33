import type { AssertionRejectionReason } from '../assertions/checker.js';

/** Why an SD-JWT VC presentation was refused: a §2.4 reason, no message of a library's. */
export class SdJwtVerificationError extends Error {
  readonly reason: AssertionRejectionReason;
  constructor(reason: AssertionRejectionReason) {
    super(`presentation refused: ${reason}`);
    this.name = 'SdJwtVerificationError';
    this.reason = reason;
  }
}

export function refuse(reason: AssertionRejectionReason): never {
  throw new SdJwtVerificationError(reason);
}
