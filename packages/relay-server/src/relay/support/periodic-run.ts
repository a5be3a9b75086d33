/**
 * A job that runs on an interval and on demand, never twice at once: a run asked for while one
 * goes on joins it. The interval is unref'd, so it never keeps a process alive; `stop()` ends the
 * interval and waits for the run in progress. The job catches its own failures (a rejected run
 * would reach every caller that joined it).
 */
export class PeriodicRun {
  readonly #job: () => Promise<void>;
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  constructor(job: () => Promise<void>, intervalMs: number) {
    this.#job = job;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.run(), this.#intervalMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** One run now (a run going on is joined, not doubled). */
  run(): Promise<void> {
    this.#running ??= this.#job().finally(() => {
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
}
