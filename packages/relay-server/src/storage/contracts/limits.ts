import { StoreInputError } from '../errors.js';

/** Most ids one `ack` or `delivered` call may name (docs/ohan-profile.md: `delivered` takes <= 500). */
export const MAX_IDS_PER_CALL = 500;
/** Most entries one read returns; a larger `limit` is lowered to this. */
export const MAX_PAGE = 500;
/** Most rows one sweep removes; a larger `batch` is lowered to this (one bounded transaction). */
export const MAX_SWEEP_BATCH = 1000;

/** Clamps a page size or batch into 1..max; anything that is not a positive integer is refused. */
export function clampCount(value: number, max: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new StoreInputError(`${what} must be a positive integer`);
  return Math.min(value, max);
}

/** Most recipients `recipientsWithPrefix` returns per call. */
export const MAX_RECIPIENTS_PER_CALL = 1000;

export function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || prefix.length === 0 || prefix.length > 1024) {
    throw new StoreInputError('prefix must be a string of 1 to 1024 characters');
  }
}

export function checkIds(ids: readonly string[]): void {
  if (!Array.isArray(ids)) throw new StoreInputError('ids must be an array');
  if (ids.length > MAX_IDS_PER_CALL) throw new StoreInputError(`at most ${MAX_IDS_PER_CALL} ids per call`);
  for (const id of ids) if (typeof id !== 'string') throw new StoreInputError('ids must be strings');
}

/** Seqs to mark (<= 500), each a positive integer. */
export function checkSeqs(seqs: readonly number[]): void {
  if (!Array.isArray(seqs)) throw new StoreInputError('seqs must be an array');
  if (seqs.length > MAX_IDS_PER_CALL) throw new StoreInputError(`at most ${MAX_IDS_PER_CALL} seqs per call`);
  for (const seq of seqs)
    if (!Number.isSafeInteger(seq) || seq < 1) throw new StoreInputError('seqs must be positive integers');
}

/** A cursor: a seq (>= 0) or absent. */
export function checkSeq(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new StoreInputError(`${what} must be a non-negative integer`);
}

/** A configured cap: a positive safe integer. */
export function checkCap(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${what} must be a positive integer`);
  return value;
}

/** A `claimDue` call's arguments, checked: the page size it reads (clamped to `MAX_PAGE`). */
export function checkClaim(now: number, limit: number, leaseMs: number): number {
  checkSeq(now, 'now');
  checkSeq(leaseMs, 'leaseMs');
  return clampCount(limit, MAX_PAGE, 'limit');
}
