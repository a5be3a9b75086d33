import { QueueFullError as WmpQueueFullError } from '@wmp/jsonrpc-envelope';
import { RelayServerError } from '../errors.js';

export type RelayStoreErrorCode =
  | 'ERR_STORE_CLOSED'
  | 'ERR_STORE_INPUT'
  | 'ERR_STORE_WRITE'
  | 'ERR_STORE_SCHEMA'
  | 'ERR_STORE_LOCKED'
  | 'ERR_STORE_UNAVAILABLE';

/**
 * Errors of the storage layer that are not protocol answers: a closed store, an argument out of
 * bounds, a failed commit, an unknown schema. Stable `code`, fixed messages (no paths, no keys),
 * so a relay can log them and answer -32603 / 500 without leaking anything.
 */
export class RelayStoreError extends RelayServerError {
  declare readonly code: RelayStoreErrorCode;
  constructor(code: RelayStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'RelayStoreError';
  }
}

/** The store was closed: nothing more is read or written. */
export class StoreClosedError extends RelayStoreError {
  constructor() {
    super('ERR_STORE_CLOSED', 'store is closed');
    this.name = 'StoreClosedError';
  }
}

/** A caller passed something the store refuses to handle (too many ids, a bad limit or size). */
export class StoreInputError extends RelayStoreError {
  constructor(message: string) {
    super('ERR_STORE_INPUT', message);
    this.name = 'StoreInputError';
  }
}

/**
 * A transaction could not be committed (disk full, I/O error, the database server down): none of
 * its writes happened, and every caller in the batch is told so. `unavailable` says the server
 * could not be reached or the connection was lost (a retry later may succeed). `cause` keeps the
 * driver's error for the logs.
 */
export class StoreWriteError extends RelayStoreError {
  readonly unavailable: boolean;
  constructor(cause: unknown, options: { unavailable?: boolean } = {}) {
    super('ERR_STORE_WRITE', 'store write failed', { cause });
    this.name = 'StoreWriteError';
    this.unavailable = options.unavailable === true;
  }
}

/** Why a database server could not be used (the setting to fix differs). */
export type StoreUnavailableReason = 'unreachable' | 'credentials' | 'no_database';

const UNAVAILABLE_MESSAGES: Readonly<Record<StoreUnavailableReason, string>> = {
  unreachable: 'database unreachable',
  credentials: 'database refused the credentials',
  no_database: 'database does not exist',
};

/**
 * A database server could not be reached or used (PostgreSQL down, wrong host or port, wrong
 * credentials, no such database): at open, or for a read while it is down. Writes that fail for
 * the same cause are `StoreWriteError`s (the batch did not commit). `cause` keeps the driver's
 * error for the logs; the message never holds the URL.
 */
export class StoreUnavailableError extends RelayStoreError {
  readonly reason: StoreUnavailableReason;
  constructor(reason: StoreUnavailableReason, cause: unknown) {
    super('ERR_STORE_UNAVAILABLE', UNAVAILABLE_MESSAGES[reason], { cause });
    this.name = 'StoreUnavailableError';
    this.reason = reason;
  }
}

/**
 * Whether `error` says the store's server is down for now (a read or a write could not reach it),
 * as opposed to a refusal or a bug: the relay then answers a typed, retryable refusal.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof StoreUnavailableError || (error instanceof StoreWriteError && error.unavailable);
}

/** The database file was written by a newer version of this package. */
export class StoreSchemaError extends RelayStoreError {
  constructor(message: string) {
    super('ERR_STORE_SCHEMA', message);
    this.name = 'StoreSchemaError';
  }
}

/**
 * Which cap refused an append: the recipient's count or bytes, the sender's share of that
 * recipient's queue (docs/architecture.md, "Bounds": nobody fills another's inbox), or the bytes of
 * the whole store.
 */
/** Another process holds the database (one SQLite file serves one relay process). */
export class StoreLockedError extends RelayStoreError {
  constructor() {
    super('ERR_STORE_LOCKED', 'database in use by another process');
    this.name = 'StoreLockedError';
  }
}

/**
 * `max_queued`, `max_bytes`, `sender_share`: a recipient's queue (or a part of a partitioned queue,
 * held to the same limits); `queue_count`, `queue_bytes`, `queue_sender_share`: a partitioned
 * queue as a whole (a peer's outbox: its own caps, a sender's totals across it); `total_bytes`:
 * the whole store.
 */
export type QueueFullReason =
  | 'max_queued'
  | 'max_bytes'
  | 'sender_share'
  | 'queue_count'
  | 'queue_bytes'
  | 'queue_sender_share'
  | 'total_bytes';

/**
 * A recipient's queue is at its `max_queued` or byte cap (docs/wmp-profile.md, "Relay routing and
 * delivery"). It *is* the wire error (-31014, canonical message, `instanceof` the envelope's
 * `QueueFullError`), so the relay answers with it as is; `reason` says which cap, in `data.reason`
 * as in the `dropped` status it causes.
 */
export class RelayQueueFullError extends WmpQueueFullError {
  readonly reason: QueueFullReason;
  constructor(reason: QueueFullReason) {
    super({ reason });
    this.name = 'RelayQueueFullError';
    this.reason = reason;
  }
}
