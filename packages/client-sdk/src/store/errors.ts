import { ClientSdkError } from '../errors.js';

/** Why a store refused a call. */
export type ClientStoreErrorCode = 'ERR_STORE_INVALID_KEY' | 'ERR_STORE_INVALID_VALUE' | 'ERR_STORE_CLOSED';

const MESSAGES: Readonly<Record<ClientStoreErrorCode, string>> = Object.freeze({
  ERR_STORE_INVALID_KEY: 'store keys are 1..1024 characters of well-formed text',
  ERR_STORE_INVALID_VALUE: 'store values are well-formed strings',
  ERR_STORE_CLOSED: 'the store is closed',
});

/** A refused store call: a stable `code` and a fixed message (never the key or the value). */
export class ClientStoreError extends ClientSdkError {
  declare readonly code: ClientStoreErrorCode;
  constructor(code: ClientStoreErrorCode) {
    super(code, MESSAGES[code]);
    this.name = 'ClientStoreError';
  }
}
