import { type QueueFullReason, StoreInputError } from '../errors.js';
import { checkCap } from './limits.js';
import { DEFAULT_QUEUE_LIMITS, type PartitionedQueueCaps, type QueueLimits } from './queue-store.js';
import { EMPTY_TOTALS, type Totals } from './totals.js';

/**
 * Validates a queue configuration once, at construction, and fills in the sender share (a
 * quarter of the recipient caps, docs/architecture.md, "Bounds") where it is not given.
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

/** Counts and bytes before an append to a part of a partitioned queue. */
export interface PartCounts {
  /** The whole queue, and the sender's totals across it. */
  readonly queue: Totals;
  readonly sender: Totals;
  /** The part, and the sender's share of it. */
  readonly part: Totals;
  readonly partSender: Totals;
  readonly total: Totals;
}

/**
 * The cap an append of `bytes` to a part would pass, if any: the part as if it were a recipient's
 * queue (`queueCapRefusal`), then the queue's own caps, then the store's.
 */
export function partCapRefusal(
  limits: QueueLimits,
  caps: PartitionedQueueCaps,
  counts: PartCounts,
  bytes: number,
): QueueFullReason | undefined {
  const asQueue = { queue: counts.part, sender: counts.partSender, total: EMPTY_TOTALS };
  const part = queueCapRefusal({ ...limits, maxTotalBytes: Number.MAX_SAFE_INTEGER }, asQueue, bytes);
  if (part !== undefined) return part;
  if (counts.queue.count >= caps.maxQueued) return 'queue_count';
  if (counts.queue.bytes + bytes > caps.maxBytes) return 'queue_bytes';
  if (counts.sender.count >= caps.maxQueuedPerSender || counts.sender.bytes + bytes > caps.maxBytesPerSender) {
    return 'queue_sender_share';
  }
  if (counts.total.bytes + bytes > limits.maxTotalBytes) return 'total_bytes';
  return undefined;
}

/** Refuses caps of a partitioned queue that are not positive integers (a caller's mistake: `StoreInputError`). */
export function checkPartitionedCaps(caps: PartitionedQueueCaps | undefined): PartitionedQueueCaps {
  const ok = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 1;
  if (
    caps === undefined ||
    !ok(caps.maxQueued) ||
    !ok(caps.maxBytes) ||
    !ok(caps.maxQueuedPerSender) ||
    !ok(caps.maxBytesPerSender)
  ) {
    throw new StoreInputError('caps must be positive integers');
  }
  return caps;
}

/** The key a part's own counter is kept under (JSON: never ambiguous, whatever the part holds). */
export function partKey(part: string): string {
  return JSON.stringify([part]);
}

/** The keys a message of a part counts under: the part's own, and its sender's share of it. */
export function partKeys(part: string, sender: string): { readonly part: string; readonly partSender: string } {
  return { part: partKey(part), partSender: JSON.stringify([part, sender]) };
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
