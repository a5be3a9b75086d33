import { decodeEd25519Multikey, verifyEd25519 } from '@wmp/jcs-signing';
import { backend } from '#crypto';
import { decodeMultibase } from './encoding.js';
import { checkShapeAndTimes, signedText, validEventPreimage } from './event.js';
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_SKEW_SECONDS, MAX_TTL_SECONDS } from './profile.js';
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

function fail(reason: EventFailure): EventVerdict {
  return { ok: false, reason };
}

/**
 * Everything a box checks before storing an event (DESIGN §4.5), with no private key: exact
 * shape, size (the caller's byte count, else the canonical JSON length), id, strict Ed25519 signature by `from_key` over the event without `signature`,
 * the stamp, and the time window. A `seq` added by a box is ignored. Never throws.
 */
export function verifyEvent(value: unknown, options: VerifyEventOptions = {}): EventVerdict {
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
  if (!verifyEd25519(decodeEd25519Multikey(event.from_key), backend.ascii(signedText(preimage, id)), signature)) {
    return fail('signature');
  }

  const strength = event.stamp?.bits ?? 0;
  if (event.stamp && leadingZeroBitsOfHex(id) < strength) return fail('stamp');

  const now = options.now ?? Date.now();
  const skew = (options.skewSeconds ?? DEFAULT_SKEW_SECONDS) * 1000;
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
