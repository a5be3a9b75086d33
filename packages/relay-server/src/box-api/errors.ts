import type { BoxErrorCode } from '@wmp/ohan-seal';
import { RelayServerError } from '../errors.js';

export type { BoxErrorCode };

/** The HTTP status of each code: one place, so a code can never come back with two statuses. */
export const BOX_ERROR_STATUS: Readonly<Record<BoxErrorCode, number>> = Object.freeze({
  invalid_event: 400,
  invalid_card: 400,
  bad_request: 400,
  unauthorized: 401,
  stamp_required: 403,
  not_registered: 403,
  not_found: 404,
  too_large: 413,
  sender_limit: 429,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  box_full: 503,
  recipient_full: 507,
});

/** Fixed messages: an answer never echoes input, keys or which internal check failed. */
const MESSAGES: Readonly<Record<BoxErrorCode, string>> = Object.freeze({
  invalid_event: 'invalid event',
  invalid_card: 'invalid card',
  bad_request: 'bad request',
  unauthorized: 'request signature refused',
  // OHAN-04: an error answer never names a lane.
  stamp_required: 'stamp required',
  not_registered: 'sender or recipient has no registered card',
  not_found: 'not found',
  too_large: 'request body too large',
  sender_limit: 'sender limit reached',
  rate_limited: 'too many requests',
  internal: 'internal error',
  unavailable: 'temporarily unavailable',
  box_full: 'box full',
  recipient_full: 'recipient full',
});

/** A refusal the app answers with `{"error":{"code","message"[,"reason"]}}` and the code's status. */
export class BoxApiError extends RelayServerError {
  declare readonly code: BoxErrorCode;
  readonly status: number;
  /** Which validation step refused an event or card (`invalid_event`, `invalid_card` only). */
  readonly reason: string | undefined;
  constructor(code: BoxErrorCode, options: { message?: string; reason?: string } = {}) {
    super(code, options.message ?? MESSAGES[code]);
    this.name = 'BoxApiError';
    this.status = BOX_ERROR_STATUS[code];
    this.reason = options.reason;
  }

  toJSON(): { error: { code: BoxErrorCode; message: string; reason?: string } } {
    const error = { code: this.code, message: this.message };
    return { error: this.reason === undefined ? error : { ...error, reason: this.reason } };
  }
}
