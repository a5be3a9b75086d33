/**
 * The error codes a box answers (docs/ohan-profile.md, "The box API"), plus the few the table
 * leaves open: a body or query that is not an event (`bad_request`), a refused card
 * (`invalid_card`), an unknown card or route (`not_found`) and the box's own failure (`internal`).
 * No code names a lane. Shared by boxes and their clients, so both read the same list.
 */
export const BOX_ERROR_CODES = [
  'invalid_event',
  'invalid_card',
  'bad_request',
  'stamp_required',
  'not_registered',
  'unauthorized',
  'not_found',
  'sender_limit',
  'rate_limited',
  'too_large',
  'recipient_full',
  'box_full',
  'internal',
  /** The box cannot check this request now (its replay cache is full, or Redis is down): try later. */
  'unavailable',
] as const;

export type BoxErrorCode = (typeof BOX_ERROR_CODES)[number];

const CODES: ReadonlySet<string> = new Set(BOX_ERROR_CODES);

/** Whether `code` is one of the box API's error codes. */
export function isBoxErrorCode(code: unknown): code is BoxErrorCode {
  return typeof code === 'string' && CODES.has(code);
}
