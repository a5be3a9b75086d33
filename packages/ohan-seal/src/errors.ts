/** Why an event could not be opened (docs/ohan-profile.md, "The seal"), each refusal its own reason. */
export type OpenFailure = 'decrypt' | 'small_order' | 'padding' | 'envelope';

/** Base of this package's thrown errors: a stable `code` and `reason`, a fixed message. */
export class OhanError extends Error {
  readonly code: string;
  readonly reason: string;
  constructor(code: string, reason: string, message: string) {
    super(message);
    this.name = 'OhanError';
    this.code = code;
    this.reason = reason;
  }
}

const openMessages: Record<OpenFailure, string> = {
  decrypt: 'sealed payload does not decrypt',
  small_order: 'ephemeral key is of small order',
  padding: 'sealed plaintext is badly padded',
  envelope: 'sealed envelope is not one JSON-RPC message',
};

/** Thrown by `openEvent`. */
export class OhanOpenError extends OhanError {
  declare readonly reason: OpenFailure;
  constructor(reason: OpenFailure) {
    super('ERR_OHAN_OPEN', reason, openMessages[reason]);
    this.name = 'OhanOpenError';
  }
}

export type SealFailure = 'small_order' | 'too_large' | 'envelope' | 'key' | 'time';

const sealMessages: Record<SealFailure, string> = {
  small_order: 'recipient encryption key is of small order',
  too_large: 'sealed event would exceed the event size limit',
  envelope: 'envelope is not one JSON-RPC message',
  key: 'recipient or sender key is invalid',
  time: 'ts and exp are out of range',
};

/** Thrown by `createEvent` and the sealing helpers when an event cannot be made. */
export class OhanSealError extends OhanError {
  declare readonly reason: SealFailure;
  constructor(reason: SealFailure) {
    super('ERR_OHAN_SEAL', reason, sealMessages[reason]);
    this.name = 'OhanSealError';
  }
}
