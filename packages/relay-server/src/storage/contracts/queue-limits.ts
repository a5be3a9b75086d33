import type { QueueFullReason } from '../errors.js';
import { checkCap } from './limits.js';
import { DEFAULT_QUEUE_LIMITS, type QueueLimits } from './queue-store.js';
import type { Totals } from './totals.js';

/**
 * Validates a queue configuration once, at construction, and fills in the sender share (a
 * quarter of the recipient caps, DESIGN §3) where it is not given.
 */
export function checkQueueLimits(limits: Partial<QueueLimits>): QueueLimits {
  const full = { ...DEFAULT_QUEUE_LIMITS, ...limits };
  const maxQueued = checkCap(full.maxQueued, 'maxQueued');
  const maxBytes = checkCap(full.maxBytes, 'maxBytes');
  return Object.freeze({
    maxQueued,
    maxBytes,
    maxQueuedPerSender: checkCap(
      limits.maxQueuedPerSender ?? Math.max(1, Math.floor(maxQueued / 4)),
      'maxQueuedPerSender',
    ),
    maxBytesPerSender: checkCap(limits.maxBytesPerSender ?? Math.max(1, Math.floor(maxBytes / 4)), 'maxBytesPerSender'),
    maxTotalBytes: checkCap(full.maxTotalBytes, 'maxTotalBytes'),
  });
}

/** Counts and bytes before an append, as every adapter reads them. */
export interface QueueCounts {
  readonly queue: Totals;
  readonly sender: Totals;
  readonly total: Totals;
}

/** The cap an append of `bytes` would pass, if any (shared by the adapters so that they refuse alike). */
export function queueCapRefusal(limits: QueueLimits, counts: QueueCounts, bytes: number): QueueFullReason | undefined {
  if (counts.queue.count >= limits.maxQueued) return 'max_queued';
  if (counts.queue.bytes + bytes > limits.maxBytes) return 'max_bytes';
  if (counts.sender.count >= limits.maxQueuedPerSender || counts.sender.bytes + bytes > limits.maxBytesPerSender) {
    return 'sender_share';
  }
  if (counts.total.bytes + bytes > limits.maxTotalBytes) return 'total_bytes';
  return undefined;
}
