import type { QueueRemoval } from '../../storage/contracts/queue-store.js';
import type { RelayStores } from '../../storage/contracts/relay-stores.js';
import { isConsentKey, recipientOfHeldKey } from '../routing/held-keys.js';
import { noEvidenceHooks, type RegisteredEvidenceHooks } from '../support/evidence-hooks.js';
import type { RelayTimings } from '../support/limits.js';
import type { Logger } from '../support/logger.js';
import { PeriodicRun } from '../support/periodic-run.js';
import type { RelayEvents } from '../support/relay-events.js';
import type { StatusNotifier } from './statuses.js';

/**
 * Removes expired messages in bounded batches (one short transaction each, at most
 * `sweepBatchesPerRun` per run) and tells each sender `expired` (and evidence, for messages under
 * it); then expired sessions, the MLS group state of expired sessions, expired key packages and
 * evidence past its retention, in the same bounded batches. Runs on
 * an unref'd interval, never two runs at once, so it neither keeps a process alive nor piles up;
 * on stores several nodes share, under their sweep lock (one node sweeps a run).
 */
export class Sweeper extends PeriodicRun {
  readonly #stores: RelayStores;
  readonly #statuses: Pick<StatusNotifier, 'terminal'>;
  readonly #events: Pick<RelayEvents, 'expired'>;
  readonly #timings: RelayTimings;
  readonly #logger: Logger;
  readonly #now: () => number;

  readonly #evidence: RegisteredEvidenceHooks;

  constructor(
    stores: RelayStores,
    statuses: Pick<StatusNotifier, 'terminal'>,
    events: Pick<RelayEvents, 'expired'>,
    timings: RelayTimings,
    logger: Logger,
    now: () => number,
    evidence: RegisteredEvidenceHooks = noEvidenceHooks,
  ) {
    super(timings.sweepIntervalMs);
    this.#evidence = evidence;
    this.#stores = stores;
    this.#statuses = statuses;
    this.#events = events;
    this.#timings = timings;
    this.#logger = logger;
    this.#now = now;
  }

  /** One sweep, on one node of a cluster at a time (the others skip this run). */
  protected override async pass(): Promise<void> {
    try {
      const lock = this.#stores.withSweepLock;
      if (lock === undefined) await this.#sweepAll();
      else await lock.call(this.#stores, 'relay', () => this.#sweepAll());
    } catch (e) {
      this.#logger.warn('relay.sweep_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    }
  }

  /** Messages that waited for their recipient's consent until they expired: `acceptance_expired`. */
  #consentsExpired(removed: readonly QueueRemoval[]): void {
    for (const r of removed) {
      if (!isConsentKey(r.recipient)) continue;
      this.#evidence.witness({
        eventType: 'acceptance_expired',
        messageId: r.id,
        sender: r.sender,
        recipient: recipientOfHeldKey(r.recipient)!,
        reason: 'timeout',
        at: this.#now(),
      });
    }
  }

  async #sweepAll(): Promise<void> {
    const { sweepBatch, sweepBatchesPerRun } = this.#timings;
    const { queue, sessions, groups, keyPackages } = this.#stores;
    const batch = Math.min(sweepBatch, 1000);
    for (let i = 0; i < sweepBatchesPerRun; i++) {
      const removed = await queue.sweepExpired(this.#now(), sweepBatch);
      this.#statuses.terminal(removed, 'expired');
      this.#consentsExpired(removed);
      this.#events.expired(removed);
      if (removed.length < batch) break;
    }
    await sessions.sweep(this.#now());
    // Evidence past its retention (records) and cases no message can add to any more.
    const { evidence } = this.#stores;
    const sweeps = [groups, keyPackages, evidence].map((s) => s.sweepExpired.bind(s));
    for (const sweep of sweeps) {
      for (let i = 0; i < sweepBatchesPerRun; i++) if ((await sweep(this.#now(), batch)) < batch) break;
    }
  }
}
