import type { BoxLimits } from './box-store.js';
import { checkCap } from './limits.js';

/** Validates a box configuration once, at construction: a bad cap is a startup error, not a runtime one. */
export function checkBoxLimits(limits: BoxLimits): BoxLimits {
  if (typeof limits.directory !== 'boolean') throw new RangeError('directory must be a boolean');
  if (!Number.isSafeInteger(limits.strangerBits) || limits.strangerBits < 0 || limits.strangerBits > 255) {
    throw new RangeError('strangerBits must be 0..255');
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
  });
}
