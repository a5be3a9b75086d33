import { BoxApiError } from './errors.js';

/** `limit` of a fetch: default 100, at most 500 (a larger value is lowered, as the store does). */
export const DEFAULT_FETCH_LIMIT = 100;
export const MAX_FETCH_LIMIT = 500;

const DIGITS = /^(0|[1-9][0-9]{0,15})$/;

/** A seq cursor as sent in `after=` or `Last-Event-ID`: plain decimal, a safe integer. */
export function parseSeq(text: string | undefined | null, what: string): number {
  if (text === undefined || text === null || text === '') return 0;
  const n = DIGITS.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new BoxApiError('bad_request', { message: `${what} must be a seq` });
  return n;
}

export function parseLimit(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_FETCH_LIMIT;
  const n = DIGITS.test(text) ? Number(text) : 0;
  if (!Number.isSafeInteger(n) || n < 1) throw new BoxApiError('bad_request', { message: 'limit must be >= 1' });
  return Math.min(n, MAX_FETCH_LIMIT);
}
