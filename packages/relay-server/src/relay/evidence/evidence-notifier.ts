import type { QueueStore } from '../../storage/contracts/queue-store.js';
import type { Forwarder } from '../routing/forwarder.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import type { Logger } from '../support/logger.js';
import type { RefusalLog } from '../support/refusals.js';

export interface EvidenceNotifierDeps {
  readonly queue: Pick<QueueStore, 'append' | 'stats'>;
  readonly forwarder: Pick<Forwarder, 'offer'>;
  /** The relay's own identity: notifies are queued as sent by it. */
  readonly relayId: string;
  /** How long a notify waits for its sender (ms). */
  readonly ttlMs: number;
  /** The per-recipient queue cap: notifies (with kept statuses) fill at most half of a sender's queue. */
  readonly maxQueued: number;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/**
 * Sends `wmp.evidence.notify` to the original sender (wmp-tables §9), or back to the peer relay
 * the message came through, always through the queue: it reaches a sender online here or on
 * another node at once, one that is away when it comes back (resume or register), and is
 * acknowledged with `wmp.evidence.ack`. A sender's queue takes notifies up to half its cap (the
 * records stay in the repository either way).
 */
export class EvidenceNotifier {
  readonly #d: EvidenceNotifierDeps;

  constructor(deps: EvidenceNotifierDeps) {
    this.#d = deps;
  }

  /** Queues `notify` (its `wmp.message_id` is the record's id) for `identity`: a sender, or a peer relay (`peer`). */
  async send(identity: string, notify: RoutedMessage, peer: boolean): Promise<void> {
    const d = this.#d;
    const id = notify.params.wmp.message_id as string;
    try {
      if (!peer && (await d.queue.stats(identity)).count >= Math.floor(d.maxQueued / 2)) {
        d.refusals.note('evidence_notify_full');
        return;
      }
      const appended = await d.queue.append(
        identity,
        { id, sender: d.relayId, body: JSON.stringify(notify) },
        { expiresAt: d.now() + d.ttlMs },
      );
      if (appended.status === 'queued') d.forwarder.offer(identity, appended.seq, notify);
    } catch (e) {
      d.refusals.note('evidence_notify_full');
      d.logger.warn('relay.evidence.notify_not_kept', { error: (e as { code?: string | number }).code ?? 'unknown' });
    }
  }
}
