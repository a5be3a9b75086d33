// The relay's periodic jobs (the sweeper, the due-message scheduler) run through one PeriodicRun:
// never two runs at once, a run asked for meanwhile joins the one going on, stop waits for it.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait-for.js';
import { PeriodicRun } from '../src/relay/support/periodic-run.js';

/** A job that counts its runs and ends only when told. */
function gatedJob() {
  let runs = 0;
  let release: () => void = () => {};
  const job = () => {
    runs++;
    return new Promise<void>((resolve) => {
      release = resolve;
    });
  };
  return { job, runs: () => runs, release: () => release() };
}

describe('PeriodicRun', () => {
  it('joins a run asked for while one goes on, and runs again once it ended', async () => {
    const gated = gatedJob();
    const periodic = new PeriodicRun(gated.job, 60_000);
    const first = periodic.run();
    expect(periodic.run()).toBe(first);
    expect(gated.runs()).toBe(1);
    gated.release();
    await first;
    const second = periodic.run();
    expect(second).not.toBe(first);
    expect(gated.runs()).toBe(2);
    gated.release();
    await second;
  });

  it('runs on its interval, and stop waits for the run going on', async () => {
    const gated = gatedJob();
    const periodic = new PeriodicRun(gated.job, 5);
    periodic.start();
    await waitFor(() => gated.runs() === 1, 5000, 'the first run');
    let stopped = false;
    const stopping = periodic.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    gated.release();
    await stopping;
    expect(gated.runs()).toBe(1);
  });
});
