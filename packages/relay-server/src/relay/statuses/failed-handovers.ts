import type { QueueStore } from '../../storage/contracts/queue-store.js';
import type { RegisteredEvidenceHooks, WitnessedEvent } from '../support/evidence-hooks.js';
import type { Logger } from '../support/logger.js';
import type { StatusNotifier } from './statuses.js';

export interface FailedHandoverDeps {
  readonly queue: Pick<QueueStore, 'ack'>;
  readonly statuses: Pick<StatusNotifier, 'send'>;
  readonly evidence: RegisteredEvidenceHooks;
  readonly logger: Logger;
}

/**
 * A delivery that failed at handover (`RelayEvents.handoverRefused`: a connection below the
 * message's assurance level): taken out of the recipient's queue, so no connection of it ever
 * gets the content, and its sender told `dropped` with the reason (the terminal status, once:
 * only the removal that took it says so; one already written elsewhere had its `delivered`).
 */
export async function failHandover(s: FailedHandoverDeps, identity: string, failed: WitnessedEvent): Promise<void> {
  try {
    const [removed] = await s.queue.ack(identity, [failed.messageId]);
    if (removed === undefined || removed.delivered) return;
    s.statuses.send(
      removed.sender,
      { message_id: failed.messageId, status: 'dropped', recipient: identity, reason: failed.reason ?? 'failed' },
      removed.notify,
    );
    s.evidence.witness(failed);
  } catch (e) {
    s.logger.warn('relay.handover_fail_failed', { error: (e as { code?: string }).code ?? 'unknown' });
  }
}
