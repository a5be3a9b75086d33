import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { SessionRecord } from './session-model.js';

/** How many sessions a store holds: all of them, and of those the unauthenticated ones. */
export interface SessionStoreLimits {
  readonly maxSessions: number;
  /** Unauthenticated (pending) sessions: their own, smaller cap (docs/architecture.md, "Bounds"). */
  readonly maxPendingSessions: number;
}

export const DEFAULT_SESSION_STORE_LIMITS: SessionStoreLimits = Object.freeze({
  maxSessions: 100_000,
  maxPendingSessions: 10_000,
});

/** Sessions held, O(1). */
export interface SessionCounts {
  readonly sessions: number;
  readonly pending: number;
}

/**
 * A change of one record: a pure function of the current record that returns the next one (the
 * same object: nothing to write). It may throw a WmpError to refuse, and then nothing is written.
 * Stores run it atomically with the write, so two changes of one session never interleave.
 */
export type SessionChange = (current: SessionRecord) => SessionRecord;

/**
 * Where a responder keeps sessions (docs/architecture.md, "Storage"). Every read-modify-write is
 * one `update`, atomic in every adapter (memory and SQLite run the change inside their single
 * writer; PostgreSQL under the row's lock), never a get-then-put across awaits: so a resumption
 * token or a challenge is used once however many requests race for it. Records are immutable: `get`
 * may return the stored object itself.
 */
export interface SessionStore {
  readonly limits: SessionStoreLimits;
  get(id: string): Promise<SessionRecord | undefined>;
  /**
   * Adds a new session. Rejects with `SessionStoreFullError` (-31007) when the store holds
   * `maxSessions`, or a pending one when it holds `maxPendingSessions` pending ones; nothing is
   * stored then. An id that exists is a `RangeError` (ids are random: a clash is a bug).
   */
  create(session: SessionRecord): Promise<void>;
  /**
   * Applies `change` to the current record and stores what it returns, atomically; resolves with
   * the stored record, or undefined when there is no session `id` (`change` is not called). A
   * change that makes a pending session active frees its pending slot, and one that makes it
   * pending again needs one (`SessionStoreFullError`).
   */
  update(id: string, change: SessionChange): Promise<SessionRecord | undefined>;
  delete(id: string): Promise<void>;
  /** Removes sessions that expired at or before `now`; returns how many. */
  sweep(now: number): Promise<number>;
  counts(): Promise<SessionCounts>;
}

/** The store is at a cap (all sessions, or the unauthenticated ones): -31007, never -32603. */
export class SessionStoreFullError extends RateLimitedError {
  readonly cap: 'sessions' | 'pending';
  constructor(cap: 'sessions' | 'pending') {
    super({ reason: cap === 'sessions' ? 'session store full' : 'too many unauthenticated sessions' });
    this.name = 'SessionStoreFullError';
    this.cap = cap;
  }
}

/** Positive integer caps, refused at construction. */
export function checkSessionStoreLimits(limits: Partial<SessionStoreLimits> = {}): SessionStoreLimits {
  const resolved = { ...DEFAULT_SESSION_STORE_LIMITS, ...limits };
  for (const [k, v] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer`);
  }
  return Object.freeze(resolved);
}

/**
 * Whether adding `next` in place of `previous` (undefined: a new session) fits the caps, given
 * the counts before. Shared by the adapters so that they refuse alike.
 */
export function sessionCapRefusal(
  limits: SessionStoreLimits,
  counts: SessionCounts,
  previous: SessionRecord | undefined,
  next: SessionRecord,
): SessionStoreFullError | undefined {
  if (previous === undefined && counts.sessions >= limits.maxSessions) return new SessionStoreFullError('sessions');
  const wasPending = previous?.state === 'pending';
  if (next.state === 'pending' && !wasPending && counts.pending >= limits.maxPendingSessions) {
    return new SessionStoreFullError('pending');
  }
  return undefined;
}
