// What a write transaction locks, and in which order (docs/architecture.md, "Storage"): the same
// order on every node.
import { createHash } from 'node:crypto';

/**
 * What an operation locks, declared before its transaction starts. The writer takes every lock of
 * a batch first, kind by kind in `LOCK_KINDS` order and each kind in key order, so two nodes'
 * transactions never wait on each other in a cycle (no deadlocks between nodes).
 */
export interface Locks {
  /** Recipients whose queue counter row (`wmp_queues`) is locked; created when missing. */
  readonly queues?: readonly string[];
  /** Session rows (`wmp_sessions`), when they exist. */
  readonly sessions?: readonly string[];
  /** MLS group rows (`mls_groups`), when they exist. */
  readonly groups?: readonly string[];
  /** Transaction-level advisory locks on names (e.g. `kp:<identity>`), for keys that have no row. */
  readonly keys?: readonly string[];
  /**
   * The operation lowers queue counters it did not lock (removals): their rows are locked right
   * before COMMIT, so it never waits for the appends in flight to those queues. Such a lock comes
   * after the batch's first ones: it shares a transaction only with operations that lock no
   * sessions, groups or keys (which come after queues in lock order).
   */
  readonly releases?: boolean;
}

export type LockKind = Exclude<keyof Locks, 'releases'>;

export interface LockKindSpec {
  readonly kind: LockKind;
  /** Makes the rows exist (in a short transaction of its own, before the batch): `$1` text[]. */
  readonly ensure?: string;
  /** Locks the rows of `$1` in key order and returns them with their key as `key`. */
  readonly lock: string;
  readonly hashed?: boolean;
}

/**
 * The lock order of every transaction: queues, sessions, groups, advisory keys, then the totals
 * rows by name (last, see `TxTotals`). Nothing waits for a lock in between: what an operation
 * writes is locked here, or taken with SKIP LOCKED. An adapter with rows of its own (the box)
 * adds its kind here, in the place that keeps this order the same for every writer.
 */
export const LOCK_KINDS: readonly LockKindSpec[] = [
  {
    kind: 'queues',
    ensure: `INSERT INTO wmp_queues (recipient) SELECT k FROM unnest($1::text[]) AS u(k) ORDER BY k
             ON CONFLICT (recipient) DO NOTHING`,
    lock: `SELECT recipient AS key, next_seq, count, bytes FROM wmp_queues
           WHERE recipient = ANY($1::text[]) ORDER BY recipient FOR UPDATE`,
  },
  {
    kind: 'sessions',
    lock: `SELECT id AS key, pending, record FROM wmp_sessions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
  },
  {
    kind: 'groups',
    lock: `SELECT session_id AS key FROM mls_groups WHERE session_id = ANY($1::text[]) ORDER BY session_id FOR UPDATE`,
  },
  {
    kind: 'keys',
    lock: `SELECT k AS key, pg_advisory_xact_lock(k) FROM
           (SELECT DISTINCT k FROM unnest($1::bigint[]) AS u(k) ORDER BY k) AS s`,
    hashed: true,
  },
];

/** A locked row, as the lock statement returned it (`key` is the locked key). */
export type LockedRow = Readonly<Record<string, unknown>> & { readonly key: string };

/** Advisory lock keys: the first 8 bytes of SHA-256 of the name, as a signed bigint. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}
