// The relay's periodic jobs (the sweeper, the due-message scheduler) run through one PeriodicRun:
// never two runs at once, a run asked for meanwhile joins the one going on, stop waits for it.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { PeriodicRun } from '../src/relay/support/periodic-run.js';

/** A job that counts its passes and ends one only when told. */
class GatedJob extends PeriodicRun {
  runs = 0;
  #release: () => void = () => {};
  protected override pass(): Promise<void> {
    this.runs++;
    return new Promise<void>((resolve) => {
      this.#release = resolve;
    });
  }
  release(): void {
    this.#release();
  }
}

describe('PeriodicRun', () => {
  it('joins a run asked for while one goes on, and runs again once it ended', async () => {
    const periodic = new GatedJob(60_000);
    const first = periodic.run();
    expect(periodic.run()).toBe(first);
    expect(periodic.runs).toBe(1);
    periodic.release();
    await first;
    const second = periodic.run();
    expect(second).not.toBe(first);
    expect(periodic.runs).toBe(2);
    periodic.release();
    await second;
  });

  it('runs on its interval, and stop waits for the run going on', async () => {
    const periodic = new GatedJob(5);
    periodic.start();
    await waitFor(() => periodic.runs === 1, 5000, 'the first run');
    let stopped = false;
    const stopping = periodic.stop().then(() => {
      stopped = true;
    });
    // Every microtask done (a stop that did not wait would have ended by then), the pass still held.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    periodic.release();
    await stopping;
    expect(periodic.runs).toBe(1);
  });
});
