/** Why a store refused a call. */
export type StoreErrorCode = 'invalid_key' | 'invalid_value' | 'closed';

const MESSAGES: Readonly<Record<StoreErrorCode, string>> = Object.freeze({
  invalid_key: 'store keys are 1..1024 characters of well-formed text',
  invalid_value: 'store values are well-formed strings',
  closed: 'the store is closed',
});

/** A refused store call: a stable `code` and a fixed message (never the key or the value). */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode) {
    super(MESSAGES[code]);
    this.name = 'StoreError';
    this.code = code;
  }
}
