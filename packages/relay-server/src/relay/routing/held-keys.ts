// Messages the recipient's relay holds instead of handing them over (core §3.5, wmp-tables §3.1):
// until their `deliver_after` (scheduled), or until the recipient consents (consented). Each is a
// queue of the queue store under a key of its own per recipient, so it has the caps, durability
// and expiry sweep of every queue, and no pump of the recipient ever reads it.
import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { OUTBOX_PREFIX } from './outbox-entry.js';

/** Held until due (`deliver_after`). */
export const SCHEDULED_PREFIX = 'sched:';
/** Held until the recipient accepts or rejects (`consented`, `consented_signed`). */
export const CONSENT_PREFIX = 'held:';

export function scheduledKey(recipient: string): string {
  return `${SCHEDULED_PREFIX}${recipient}`;
}

export function consentKey(recipient: string): string {
  return `${CONSENT_PREFIX}${recipient}`;
}

/** The recipient a holding key holds for, or undefined for any other key. */
export function recipientOfHeldKey(key: string): string | undefined {
  if (key.startsWith(SCHEDULED_PREFIX)) return key.slice(SCHEDULED_PREFIX.length);
  if (key.startsWith(CONSENT_PREFIX)) return key.slice(CONSENT_PREFIX.length);
  return undefined;
}

export function isConsentKey(key: string): boolean {
  return key.startsWith(CONSENT_PREFIX);
}

/**
 * Queue keys that are no identity's (outboxes, held messages): nobody authenticates as one or
 * sends to one, or it would read or fill what the relay keeps there.
 */
export function isReservedKey(identifier: string): boolean {
  return (
    identifier.startsWith(OUTBOX_PREFIX) ||
    identifier.startsWith(SCHEDULED_PREFIX) ||
    identifier.startsWith(CONSENT_PREFIX)
  );
}

/** What a notice's queue id starts with: a notice is no message, and nobody hears a status of it. */
const NOTICE_PREFIX = 'ntc-';

/** A fresh id for a notice (the relay's, 128 random bits: no sender can take it first). */
export function newNoticeId(): string {
  return `${NOTICE_PREFIX}${b64urlEncode(randomBytes(16))}`;
}

export function isNoticeId(id: string): boolean {
  return id.startsWith(NOTICE_PREFIX);
}
