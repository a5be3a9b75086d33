import { type BoxErrorCode, isBoxErrorCode } from '@wmp/ohan-seal';
import { ClientSdkError } from '../errors.js';

/**
 * Why a mailbox call failed. The box's own answers keep their wire codes (docs/ohan-profile.md and
 * the box API's additions); the rest are the client's.
 */
export type MailboxErrorCode =
  // answered by a box
  | BoxErrorCode
  /** Another error answer (an unknown code, a proxy's page): see `status`. */
  | 'relay_error'
  // decided by the client
  /** The box could not be reached, or did not answer in time. */
  | 'network'
  /** The box answered something that is not what the API says (shape, size, a card for another key). */
  | 'bad_response'
  /** No relay to talk to: none given and no card published through this mailbox. */
  | 'no_relays'
  /** A key that is not an Ed25519 Multikey or did:key. */
  | 'invalid_key'
  /** The envelope names another sender than this identity, or is not one JSON-RPC message. */
  | 'invalid_envelope'
  /** A box asks strangers for more stamp bits than `maxStampBits` allows. */
  | 'stamp_too_costly'
  /** `tls` options where they cannot apply: a browser, or a `fetch` of the application's own. */
  | 'tls_options';

const MESSAGES: Readonly<Record<MailboxErrorCode, string>> = Object.freeze({
  invalid_event: 'the box refused the event',
  invalid_card: 'invalid card',
  bad_request: 'the box refused the request',
  stamp_required: 'a stamp is required',
  not_registered: 'sender or recipient has no registered card',
  unauthorized: 'request signature refused',
  not_found: 'not found',
  sender_limit: 'sender limit reached',
  rate_limited: 'too many requests',
  too_large: 'too large',
  recipient_full: 'recipient full',
  box_full: 'box full',
  internal: 'the box failed',
  unavailable: 'the box is busy: try again later',
  relay_error: 'the relay answered with an error',
  network: 'the box could not be reached',
  bad_response: 'the box answered something unexpected',
  no_relays: 'no relays to use',
  invalid_key: 'not an Ed25519 key',
  invalid_envelope: 'the envelope cannot be sent',
  stamp_too_costly: 'the box asks for a stamp above maxStampBits',
  tls_options: 'TLS options need the Mailbox of @wmp/client-sdk/node',
});

export interface MailboxErrorDetails {
  /** The box origin the call went to. */
  readonly relay?: string;
  /** The HTTP status of the box's answer. */
  readonly status?: number;
  /** The box's `reason` (`invalid_event`, `invalid_card`) or the local card check's. */
  readonly reason?: string;
}

/** A failed mailbox call: a stable `code`, a fixed message, and where it happened. */
export class MailboxError extends ClientSdkError {
  declare readonly code: MailboxErrorCode;
  readonly relay: string | undefined;
  readonly status: number | undefined;
  readonly reason: string | undefined;

  constructor(code: MailboxErrorCode, details: MailboxErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, MESSAGES[code], options);
    this.name = 'MailboxError';
    this.relay = details.relay;
    this.status = details.status;
    this.reason = details.reason;
  }

  /** The error of a box's error answer: its code when known, else `relay_error`. */
  static fromAnswer(relay: string, status: number, code: unknown, reason: unknown): MailboxError {
    return new MailboxError(isBoxErrorCode(code) ? code : 'relay_error', {
      relay,
      status,
      ...(typeof reason === 'string' && reason.length <= 64 ? { reason } : {}),
    });
  }
}
