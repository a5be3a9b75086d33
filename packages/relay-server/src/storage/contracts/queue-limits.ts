import { checkCap } from './limits.js';
import type { QueueLimits } from './queue-store.js';

/** Validates a queue configuration once, at construction. */
export function checkQueueLimits(limits: QueueLimits): QueueLimits {
  return Object.freeze({
    maxQueued: checkCap(limits.maxQueued, 'maxQueued'),
    maxBytes: checkCap(limits.maxBytes, 'maxBytes'),
  });
}
