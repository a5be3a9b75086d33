import type { Totals } from './totals.js';

/** What the relay queues for an offline recipient: one routed WMP message (docs/architecture.md, "Storage"). */
export interface QueueMessageInput {
  /** The WMP message id (`id`, or the relay-assigned `wmp.message_id`): unique per recipient. */
  readonly id: string;
  /** The identity that sent it: where `delivered` / `expired` statuses go. */
  readonly sender: string;
  /** The message exactly as it will be forwarded (relay chain appended), as JSON text. */
  readonly body: string;
  /**
   * Its sender asked for statuses (its session negotiated `offline.status_notifications`): a
   * terminal status it cannot take live is kept for it. Recorded with the message, so this holds
   * across restarts and nodes. Default false.
   */
  readonly notify?: boolean;
  /**
   * Its sender's session negotiated `evidence` (or a peer relay forwarded it under evidence): its
   * delivery, acknowledgement and expiry give rise to evidence records. Default false.
   */
  readonly evidence?: boolean;
}

export interface AppendOptions {
  /** When the message expires (ms since the epoch): `expires_at`, `offline.ttl` or the relay default. */
  readonly expiresAt: number;
  /** Bytes counted against the recipient's cap; default: the UTF-8 length of `body`. */
  readonly bytes?: number;
  /**
   * When it falls due (ms since the epoch): a message held for later (`wmp.deliver_after`), which
   * `claimDue` hands out from then on. Default: none (it is never claimed).
   */
  readonly dueAt?: number;
}

/**
 * The caps of a partitioned queue as a whole (a peer relay's outbox: its parts are the remote
 * recipients). Its parts are held to the store's own per-recipient limits, as if each were a
 * recipient's queue here.
 */
export interface PartitionedQueueCaps {
  /** Messages in the whole queue. */
  readonly maxQueued: number;
  /** Bytes in the whole queue. */
  readonly maxBytes: number;
  /** Messages one sender may have in the whole queue, every part together. */
  readonly maxQueuedPerSender: number;
  /** Bytes one sender may have in the whole queue, every part together. */
  readonly maxBytesPerSender: number;
}

export interface PartAppendOptions extends AppendOptions {
  /** The part of the queue the message belongs to (the outbox's remote recipient). */
  readonly part: string;
  readonly caps: PartitionedQueueCaps;
}

export type AppendResult =
  /** Appended now, at this position. */
  | { readonly status: 'queued'; readonly seq: number }
  /** The recipient already had a message with this id (a retry): nothing was added. */
  | { readonly status: 'exists'; readonly seq: number };

/** A queued message as read back. */
export interface QueuedMessage {
  readonly recipient: string;
  readonly seq: number;
  readonly id: string;
  readonly sender: string;
  readonly body: string;
  readonly expiresAt: number;
  readonly bytes: number;
  /** It was written to a live connection of the recipient at least once (docs/architecture.md, "Message statuses"). */
  readonly delivered: boolean;
  /** Its sender asked for statuses. */
  readonly notify: boolean;
  /** It is under evidence. */
  readonly evidence: boolean;
}

export interface QueuePage {
  /** In seq order. */
  readonly messages: readonly QueuedMessage[];
  /** The cursor to read on from: the last seq returned, or the cursor given when none was. */
  readonly next: number;
  /** True when unexpired messages remain after `next`. */
  readonly more: boolean;
}

/**
 * A message that left the queue (acknowledged or expired), or that was just marked delivered:
 * enough to send its terminal status once (`delivered` tells whether that status already went).
 */
export interface QueueRemoval {
  readonly recipient: string;
  readonly seq: number;
  readonly id: string;
  readonly sender: string;
  readonly delivered: boolean;
  /** Its sender asked for statuses: its terminal status is kept for it when it cannot take it live. */
  readonly notify: boolean;
  /** It is under evidence: what happened to it is recorded. */
  readonly evidence: boolean;
}

export interface QueueLimits {
  /** Messages per recipient (`max_queued`). */
  readonly maxQueued: number;
  /** Bytes per recipient. */
  readonly maxBytes: number;
  /** Messages one sender may have in one recipient's queue (default a quarter of `maxQueued`). */
  readonly maxQueuedPerSender: number;
  /** Bytes one sender may have in one recipient's queue (default a quarter of `maxBytes`). */
  readonly maxBytesPerSender: number;
  /** Bytes queued in the whole store, every recipient together (docs/architecture.md, "Bounds"). */
  readonly maxTotalBytes: number;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = Object.freeze({
  maxQueued: 1000,
  maxBytes: 16 * 1024 * 1024,
  maxQueuedPerSender: 250,
  maxBytesPerSender: 4 * 1024 * 1024,
  maxTotalBytes: 1024 * 1024 * 1024,
});

/**
 * The durable per-recipient WMP message queue (docs/architecture.md, "Storage"). Every routed
 * message is appended here before anything is acknowledged, read back in order, and removed only by
 * the recipient's acknowledgement or by expiry. Every method takes the recipient explicitly and
 * touches only that recipient's queue; the relay passes the authenticated identity, so nobody reads
 * or removes another's messages.
 *
 * Seqs are per recipient, start at 1, strictly increase and are never reused (not even after the
 * queue empties), so a cursor never points at a different message.
 */
export interface QueueStore {
  /**
   * Appends a message; resolves once it is durable. Idempotent on `message.id` per recipient.
   * Rejects with `RelayQueueFullError` (-31014) when the recipient is at `maxQueued`, the bytes would
   * exceed `maxBytes`, the sender would pass its share of the recipient's queue, or the store its
   * `maxTotalBytes`; the checks and the insert are one atomic operation. A retry of a queued id
   * is answered `exists` even then.
   */
  append(recipient: string, message: QueueMessageInput, options: AppendOptions): Promise<AppendResult>;
  /**
   * Appends a message to one part of a partitioned queue (docs/federation-profile.md: a peer's
   * outbox, partitioned by remote recipient), so that filling one part blocks only that part.
   * Rejects with `RelayQueueFullError` (-31014) when the part would pass the store's
   * per-recipient limits (`maxQueued`, `maxBytes`, and the sender's share of them:
   * `maxQueuedPerSender`, `maxBytesPerSender`), the whole queue `options.caps` (its count and
   * bytes, and the sender's totals across every part), or the store its `maxTotalBytes`; the checks
   * and the insert are one atomic operation. Idempotent on `message.id` per queue, as `append`
   * (a retry is `exists` even when full). Read, acknowledged and swept like any queue; a queue
   * is appended to either by parts or with `append`, never both.
   */
  appendToPart(queue: string, message: QueueMessageInput, options: PartAppendOptions): Promise<AppendResult>;
  /** Count and bytes queued in one part of a partitioned queue, O(1). */
  partStats(queue: string, part: string): Promise<Totals>;
  /**
   * Up to `limit` messages after `cursor` in seq order: a seq, a message id (an id no longer
   * queued reads from the start: everything unacknowledged is replayed), or `undefined` for the
   * start. With `now`, messages expired at `now` are skipped (the sweeper reports them).
   */
  after(recipient: string, cursor: number | string | undefined, limit: number, now?: number): Promise<QueuePage>;
  /** One message of this recipient by its id (expired or not), or undefined. */
  get(recipient: string, id: string): Promise<QueuedMessage | undefined>;
  /**
   * Up to `limit` (<= 500) unexpired messages of any queue whose `dueAt` is at or before `now`
   * (the earliest due, in no set order), each claimed for `leaseMs`: its `dueAt` moves to `now + leaseMs`, so no other
   * caller (node) gets it meanwhile, and it falls due again if the claimer dies before removing
   * it. One atomic operation.
   */
  claimDue(now: number, limit: number, leaseMs: number): Promise<QueuedMessage[]>;
  /** Removes the named messages of this recipient (<= 500 ids); returns what was removed, in seq order. */
  ack(recipient: string, ids: readonly string[]): Promise<QueueRemoval[]>;
  /** Removes this recipient's messages up to and including `id` (a resume's `last_received_id`). */
  ackThrough(recipient: string, id: string): Promise<QueueRemoval[]>;
  /**
   * Marks the messages at `seqs` (<= 500) delivered: written to a live connection. Returns those
   * that were not marked before (their sender gets `delivered` now, once, whatever connection and
   * node wrote them); the messages stay queued until acknowledged or expired.
   */
  markDelivered(recipient: string, seqs: readonly number[]): Promise<QueueRemoval[]>;
  /**
   * Unexpired messages of one recipient never written to any connection (what a resume missed),
   * not counting those of `exceptSender` (the relay's own kept statuses are no messages).
   */
  undelivered(recipient: string, now: number, exceptSender?: string): Promise<number>;
  /**
   * Removes at most `batch` messages with `expiresAt <= now`, earliest expiry first, and returns
   * them, so the relay can send `expired` statuses. Call again while it returns a full batch.
   */
  sweepExpired(now: number, batch: number): Promise<QueueRemoval[]>;
  /** Count and bytes queued for one recipient, O(1). */
  stats(recipient: string): Promise<Totals>;
  /**
   * Recipients whose key starts with `prefix` that have messages queued now, at most `limit`,
   * in no set order (<= 1000; `StoreInputError` for an empty prefix): how a relay finds the outboxes of
   * peer relays (`relay:<origin>`) that still hold something after a restart, or that another
   * node of its cluster left behind. Not for a hot path: it may scan every recipient's row.
   */
  recipientsWithPrefix(prefix: string, limit: number): Promise<string[]>;
  /** The limits this store enforces. */
  readonly limits: QueueLimits;
  /** Count and bytes queued in the whole store, O(1). */
  totals(): Promise<Totals>;
}
