import { MAX_TTL_SECONDS } from '@wmp/ohan-seal';
import type { BoxContext } from './context.js';
import { BOX_PROTOCOL } from './options.js';

/** The `GET /limits` answer (docs/ohan-profile.md, "The box API"): the values in force, from the store and the app. */
export function limitsAnswer(box: BoxContext) {
  const { store, directory, maxEventBytes, skewSeconds } = box.options;
  const limits = store.limits;
  return {
    protocol: BOX_PROTOCOL,
    directory,
    stranger_bits: limits.strangerBits,
    // Ours: what the card of a key this box does not know must be stamped with.
    ...(directory ? { card_stamp_bits: limits.cardStampBits } : {}),
    max_event_bytes: maxEventBytes,
    max_ttl_seconds: MAX_TTL_SECONDS,
    skew_seconds: skewSeconds,
    lanes: { contact: limits.lanes.contact, stranger: limits.lanes.stranger },
    caps: { sender_bytes: limits.senderBytes, recipient_bytes: limits.recipientBytes, box_bytes: limits.boxBytes },
  };
}
