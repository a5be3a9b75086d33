import type { SessionStore } from '@wmp/session';
import type { QueueStore } from '../queue-store.js';
import type { RelayTimings } from './config.js';
import type { Logger } from './logger.js';
import type { StatusNotifier } from './statuses.js';

/**
 * Removes expired messages in bounded batches (one short transaction each, at most
 * `sweepBatchesPerRun` per run) and tells each sender `expired`; then expired sessions. Runs on
 * an unref'd interval, never two runs at once, so it neither keeps a process alive nor piles up.
 */
export class Sweeper {
  readonly #queue: QueueStore;
  readonly #sessions: SessionStore;
  readonly #statuses: StatusNotifier;
  readonly #timings: RelayTimings;
  readonly #logger: Logger;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  constructor(
    queue: QueueStore,
    sessions: SessionStore,
    statuses: StatusNotifier,
    timings: RelayTimings,
    logger: Logger,
    now: () => number,
  ) {
    this.#queue = queue;
    this.#sessions = sessions;
    this.#statuses = statuses;
    this.#timings = timings;
    this.#logger = logger;
    this.#now = now;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.run(), this.#timings.sweepIntervalMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** One run (also callable directly); a run already going is joined, not doubled. */
  run(): Promise<void> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops the interval and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  async #sweep(): Promise<void> {
    const { sweepBatch, sweepBatchesPerRun } = this.#timings;
    try {
      for (let i = 0; i < sweepBatchesPerRun; i++) {
        const removed = await this.#queue.sweepExpired(this.#now(), sweepBatch);
        this.#statuses.removed(removed, 'expired');
        if (removed.length < Math.min(sweepBatch, 1000)) break;
      }
      await this.#sessions.sweep(this.#now());
    } catch (e) {
      this.#logger.warn('relay.sweep_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    }
  }
}
