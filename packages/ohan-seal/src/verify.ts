import { decodeEd25519Multikey, verifyEd25519 } from '@wmp/jcs-signing';
import { backend } from '#crypto';
import { decodeMultibase } from './encoding.js';
import { checkShapeAndTimes, signedText, validEventPreimage } from './event.js';
import { DEFAULT_MAX_EVENT_BYTES, MAX_TTL_SECONDS, OHAN_SKEW_SECONDS } from './profile.js';
import { leadingZeroBitsOfHex } from './stamp.js';

export type EventFailure = 'shape' | 'id' | 'signature' | 'stamp' | 'time' | 'too_large';

export type EventVerdict =
  | { readonly ok: true; readonly id: string; readonly strength: number }
  | { readonly ok: false; readonly reason: EventFailure };

export interface VerifyEventOptions {
  /** The verifier's clock in ms (default: now). */
  readonly now?: number;
  readonly skewSeconds?: number;
  readonly maxEventBytes?: number;
  /** The event's JSON size in bytes when the caller already knows it (a box knows its body size). */
  readonly size?: number;
}

const DAY_MS = 24 * 3600 * 1000;

function fail(reason: EventFailure): { readonly ok: false; readonly reason: EventFailure } {
  return { ok: false, reason };
}

/** The Ed25519 check of `verifyEvent`: `from_key`'s raw public key (strong, checked), the signed bytes, the raw signature. */
export interface EventSignatureCheck {
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

/** `verifyEvent` up to its Ed25519 check: a refusal, or the check to run and the verdict it leads to. */
export type PreparedEventVerdict =
  | { readonly ok: false; readonly reason: EventFailure }
  | {
      readonly ok: true;
      readonly check: EventSignatureCheck;
      /** The verdict when the signature verifies (a later check, stamp or time, may still refuse). */
      readonly verdict: EventVerdict;
    };

/**
 * Everything a box checks before storing an event (docs/ohan-profile.md, "Validation"), with no
 * private key: exact shape, size (the caller's byte count, else the canonical JSON length), id,
 * strict Ed25519 signature by `from_key` over the event without `signature`, the stamp, and the
 * time window. A `seq` added by a box is ignored. Never throws.
 */
export function verifyEvent(value: unknown, options: VerifyEventOptions = {}): EventVerdict {
  const prepared = prepareEventVerification(value, options);
  if (!prepared.ok) return prepared;
  const { publicKey, message, signature } = prepared.check;
  return completeEventVerification(prepared, verifyEd25519(publicKey, message, signature));
}

/**
 * `verifyEvent` split at its Ed25519 check, for a caller that runs that check elsewhere (a box's
 * worker threads): every other check, in the same order, so that with `completeEventVerification`
 * the verdict, reason included, is exactly `verifyEvent`'s. The check must be strict RFC 8032
 * verification (node:crypto's is); the key is already known not to be of small order.
 */
export function prepareEventVerification(value: unknown, options: VerifyEventOptions = {}): PreparedEventVerdict {
  const maxBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  if (options.size !== undefined && options.size > maxBytes) return fail('too_large');
  const checked = checkShapeAndTimes(value);
  if (!checked) return fail('shape');
  const { event, ts, exp } = checked;

  const preimage = validEventPreimage(event);
  // A valid event is ASCII, so its canonical JSON length is its size in bytes.
  const size = options.size ?? preimage.length + event.id.length + event.signature.length + 21;
  if (size > maxBytes) return fail('too_large');
  const id = backend.sha256Hex(preimage);
  if (id !== event.id) return fail('id');

  const signature = decodeMultibase(event.signature, 64);
  if (!signature) return fail('signature');
  const check = {
    publicKey: decodeEd25519Multikey(event.from_key),
    message: backend.ascii(signedText(preimage, id)),
    signature,
  };
  return { ok: true, check, verdict: afterSignature(event, id, ts, exp, options) };
}

/** The verdict of a prepared event, given whether its signature check passed. */
export function completeEventVerification(
  prepared: Extract<PreparedEventVerdict, { ok: true }>,
  signatureValid: boolean,
): EventVerdict {
  return signatureValid ? prepared.verdict : fail('signature');
}

/** The checks after the signature: the stamp, then the time window. */
function afterSignature(
  event: { readonly stamp?: { readonly bits: number } },
  id: string,
  ts: number,
  exp: number,
  options: VerifyEventOptions,
): EventVerdict {
  const strength = event.stamp?.bits ?? 0;
  if (event.stamp && leadingZeroBitsOfHex(id) < strength) return fail('stamp');

  const now = options.now ?? Date.now();
  const skew = (options.skewSeconds ?? OHAN_SKEW_SECONDS) * 1000;
  if (
    !(
      exp > now &&
      exp <= now + MAX_TTL_SECONDS * 1000 + skew &&
      ts <= now + skew &&
      ts >= now - 30 * DAY_MS - skew &&
      ts <= exp
    )
  ) {
    return fail('time');
  }
  return { ok: true, id, strength };
}
