import { type BoxLimits, DEFAULT_BOX_LIMITS } from './box-store.js';
import { checkCap } from './limits.js';

/**
 * Validates a box configuration once, at construction: a bad cap is a startup error, not a runtime
 * one.
 */
export function checkBoxLimits(input: Partial<BoxLimits>): BoxLimits {
  const limits: BoxLimits = { ...DEFAULT_BOX_LIMITS, ...input };
  if (typeof limits.directory !== 'boolean') throw new RangeError('directory must be a boolean');
  for (const name of ['strangerBits', 'cardStampBits'] as const) {
    const bits = limits[name];
    if (!Number.isSafeInteger(bits) || bits < 0 || bits > 255) throw new RangeError(`${name} must be 0..255`);
  }
  return Object.freeze({
    directory: limits.directory,
    strangerBits: limits.strangerBits,
    lanes: Object.freeze({
      contact: checkCap(limits.lanes.contact, 'lanes.contact'),
      stranger: checkCap(limits.lanes.stranger, 'lanes.stranger'),
    }),
    senderBytes: checkCap(limits.senderBytes, 'senderBytes'),
    recipientBytes: checkCap(limits.recipientBytes, 'recipientBytes'),
    boxBytes: checkCap(limits.boxBytes, 'boxBytes'),
    maxContacts: checkCap(limits.maxContacts, 'maxContacts'),
    maxCards: checkCap(limits.maxCards, 'maxCards'),
    cardStampBits: limits.cardStampBits,
    cardTtlSeconds: checkCap(limits.cardTtlSeconds, 'cardTtlSeconds'),
  });
}
