import type { BoxStore } from './box-store.js';
import { MAX_PAGE } from './limits.js';
import type { QueueRemoval, QueueStore } from './queue-store.js';

/**
 * Removes every message of one queue (a recipient's, or a peer relay's outbox `relay:<origin>`),
 * expired ones too, through the store's own `ack`, so each running total (the queue's, its
 * senders', its parts', the store's) stays exact on every adapter. Returns what was removed, in
 * seq order. Messages appended while it runs may be removed too; it stops when a page removes
 * nothing (another caller took them).
 */
export async function purgeQueue(queue: QueueStore, recipient: string): Promise<QueueRemoval[]> {
  const removed: QueueRemoval[] = [];
  for (;;) {
    const page = await queue.after(recipient, undefined, MAX_PAGE);
    if (page.messages.length === 0) return removed;
    const taken = await queue.ack(
      recipient,
      page.messages.map((m) => m.id),
    );
    if (taken.length === 0) return removed;
    removed.push(...taken);
  }
}

/**
 * Removes every undelivered event addressed to `recipient` in the box, expired ones too, through
 * the store's own `delivered` (the totals stay exact); returns how many went.
 */
export async function purgeBox(box: BoxStore, recipient: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await box.fetch(recipient, 0, MAX_PAGE);
    if (page.events.length === 0) return removed;
    const taken = await box.delivered(
      recipient,
      page.events.map((e) => e.id),
    );
    if (taken === 0) return removed;
    removed += taken;
  }
}
