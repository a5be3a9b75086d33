import type { Logger } from './logger.js';

/**
 * Logs refusals once per cause per interval (decision 0130: never once per request, which would let
 * a client fill the log), with how many there were since the last line. Causes are fixed words
 * (`session_store_full`, `connection_slots`, ...), never input.
 */
export class RefusalLog {
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #causes = new Map<string, { at: number; count: number }>();
  /** Every refusal counted, by cause, for /metrics. */
  readonly totals = new Map<string, number>();

  constructor(logger: Logger, intervalMs: number, now: () => number) {
    this.#logger = logger;
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  note(cause: string): void {
    this.totals.set(cause, (this.totals.get(cause) ?? 0) + 1);
    const now = this.#now();
    const seen = this.#causes.get(cause);
    if (seen !== undefined && now - seen.at < this.#intervalMs) {
      seen.count++;
      return;
    }
    const count = (seen?.count ?? 0) + 1;
    this.#causes.set(cause, { at: now, count: 0 });
    this.#logger.warn('relay.refused', { cause, count });
  }
}
