import { rfc3339 } from '@wmp/jsonrpc-envelope';
import type { QueueStore } from '../../storage/contracts/queue-store.js';
import { RelayQueueFullError } from '../../storage/errors.js';
import type { Logger } from '../support/logger.js';
import { PeriodicRun } from '../support/periodic-run.js';
import type { RelayEvents } from '../support/relay-events.js';
import type { StatusParams } from '../support/status-params.js';
import type { Forwarder } from './forwarder.js';
import { type HandoverDeps, handOver } from './handover.js';
import { recipientOfHeldKey } from './held-keys.js';
import type { RoutedMessage } from './routed-message.js';

/** Due messages handed over per claim. */
const BATCH = 100;

export interface SchedulerDeps {
  readonly queue: Pick<QueueStore, 'claimDue' | 'ack'>;
  readonly handover: HandoverDeps;
  readonly forwarder: Pick<Forwarder, 'offerRouted'>;
  readonly events: Pick<RelayEvents, 'status'>;
  readonly logger: Logger;
  /** How often due messages are looked for. */
  readonly intervalMs: number;
  /** How long a claim holds: a node that dies with a claim leaves the message due again after it. */
  readonly leaseMs: number;
  now(): number;
}

/**
 * Scheduled delivery (`wmp.deliver_after`, core §3.2): messages held in the store until due are
 * claimed (on a cluster, by one node: `QueueStore.claimDue`), handed over as their consignment
 * asks (into the recipient's queue, or held for consent with a notice), and removed from where
 * they waited. A message whose recipient's queue is full stays claimed and is tried again when
 * the claim runs out, until it expires (its sender then hears `expired`). Nothing is lost to a
 * restart or a node's death: what waits is in the store.
 */
export class DueScheduler extends PeriodicRun {
  readonly #s: SchedulerDeps;

  constructor(deps: SchedulerDeps) {
    super(deps.intervalMs);
    this.#s = deps;
  }

  protected override async pass(): Promise<void> {
    const s = this.#s;
    try {
      for (;;) {
        const due = await s.queue.claimDue(s.now(), BATCH, s.leaseMs);
        await Promise.all(due.map((m) => this.#handOver(m)));
        if (due.length < BATCH) return;
      }
    } catch (e) {
      s.logger.warn('relay.schedule_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    }
  }

  async #handOver(held: Awaited<ReturnType<QueueStore['claimDue']>>[number]): Promise<void> {
    const s = this.#s;
    const recipient = recipientOfHeldKey(held.recipient);
    if (recipient === undefined) return;
    const message = JSON.parse(held.body) as RoutedMessage;
    const entry = {
      id: held.id,
      sender: held.sender,
      notify: held.notify,
      expiresAt: held.expiresAt,
      body: held.body,
      bytes: held.bytes,
      evidence: held.evidence,
    };
    try {
      const { offer } = await handOver(s.handover, recipient, message, entry, false);
      if (offer !== undefined) {
        void s.forwarder.offerRouted(recipient, offer.seq, offer.message).then((nowhere) => {
          if (!nowhere) return;
          const queued: StatusParams = {
            message_id: held.id,
            status: 'queued',
            recipient,
            queued_until: rfc3339(held.expiresAt),
          };
          s.events.status(held.sender, queued, held.notify);
        });
      }
      await s.queue.ack(held.recipient, [held.id]);
    } catch (e) {
      // A full queue takes it later (the claim runs out, and it is due again).
      if (!(e instanceof RelayQueueFullError)) throw e;
    }
  }
}
