import type { QueueRemoval } from '../queue-store.js';
import type { RelayMetrics } from './metrics.js';
import type { Presence } from './presence.js';
import { metaFor } from './services.js';

export type MessageStatus = 'queued' | 'delivered' | 'expired' | 'dropped';

export interface StatusParams {
  readonly message_id: string;
  readonly status: MessageStatus;
  readonly recipient?: string;
  readonly queued_until?: string;
  readonly reason?: string;
}

/**
 * `wmp.message.status` to a sender (core §5.3.1): to each connection where the sender is
 * registered on a session that negotiated `offline.status_notifications`. Statuses are
 * notifications and are not queued: a sender offline at that moment misses them (its own
 * request-form `deliver` result is the durable acknowledgement).
 */
export class StatusNotifier {
  readonly #presence: Presence;
  readonly #metrics: RelayMetrics;
  readonly #now: () => number;

  constructor(presence: Presence, metrics: RelayMetrics, now: () => number) {
    this.#presence = presence;
    this.#metrics = metrics;
    this.#now = now;
  }

  send(sender: string, params: StatusParams): void {
    this.#metrics.status(params.status);
    const now = this.#now();
    for (const e of this.#presence.endpoints(sender)) {
      const session = e.hopSession;
      if (!e.statuses || session === undefined || e.registeredUntil <= now || !e.connection.sessions.has(session))
        continue;
      void e.connection.peer
        .notify('wmp.message.status', { wmp: metaFor(session), ...params }, session)
        .catch(() => undefined);
    }
  }

  /** The terminal status of each message that left a queue (ack, resume or expiry): one each. */
  removed(removals: readonly QueueRemoval[], status: 'delivered' | 'expired'): void {
    for (const r of removals) this.send(r.sender, { message_id: r.id, status, recipient: r.recipient });
  }
}
