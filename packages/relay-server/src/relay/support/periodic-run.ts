/**
 * A job that runs on an interval and on demand, never twice at once: a run asked for while one
 * goes on joins it. The interval is unref'd, so it never keeps a process alive; `stop()` ends the
 * interval and waits for the run in progress. A subclass is the job (`pass`), and catches its own
 * failures (a rejected pass would reach every caller that joined it).
 */
export abstract class PeriodicRun {
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** One pass of the job. */
  protected abstract pass(): Promise<void>;

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.run(), this.#intervalMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** One pass now (a pass going on is joined, not doubled). */
  run(): Promise<void> {
    this.#running ??= this.pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops the interval and waits for a pass in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
