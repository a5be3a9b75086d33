import type { BoxStore } from '../storage/contracts/box-store.js';

export interface SweepOptions {
  /** The box's clock in ms (default `Date.now`). */
  readonly now?: () => number;
  /** Events removed per transaction (default 500; the store caps it at 1000). */
  readonly batch?: number;
  /** Most batches per run (default 20): a backlog is worked off over several runs, never in one long stall. */
  readonly maxBatches?: number;
}

/**
 * One sweep: removes expired events in bounded batches until a batch comes back short or the
 * batch budget is spent. Returns how many went. The relay may schedule this itself.
 */
export async function sweepExpiredEvents(store: BoxStore, options: SweepOptions = {}): Promise<number> {
  return inBatches((now, batch) => store.sweepExpired(now, batch), options);
}

/** `sweepExpiredEvents` for directory cards that were not refreshed in time. */
export async function sweepExpiredCards(store: BoxStore, options: SweepOptions = {}): Promise<number> {
  return inBatches((now, batch) => store.sweepExpiredCards(now, batch), options);
}

async function inBatches(
  sweep: (now: number, batch: number) => Promise<number>,
  options: SweepOptions,
): Promise<number> {
  const now = options.now ?? Date.now;
  const batch = options.batch ?? 500;
  const maxBatches = options.maxBatches ?? 20;
  let removed = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await sweep(now(), batch);
    removed += n;
    if (n < batch) break;
  }
  return removed;
}

export interface BoxSweeper {
  /** Stops the timer and waits for a sweep in progress. */
  close(): Promise<void>;
}

/**
 * Runs `sweepExpiredEvents` every `intervalMs` on an unref'd timer (it never keeps the process
 * alive). Runs never overlap (on a cluster, not even across nodes, under `lock`); a failed run is reported to `onError` and the next one tries again.
 */
export function startBoxSweeper(
  store: BoxStore,
  options: SweepOptions & {
    readonly intervalMs: number;
    readonly onError?: (error: unknown) => void;
    /** Runs a sweep on one node of a cluster at a time (the stores' sweep lock); default: runs it. */
    readonly lock?: (sweep: () => Promise<void>) => Promise<void>;
  },
): BoxSweeper {
  const lock = options.lock ?? ((sweep) => sweep());
  let running: Promise<void> | undefined;
  let closed = false;
  const tick = () => {
    if (running !== undefined || closed) return;
    running = lock(async () => {
      await sweepExpiredEvents(store, options);
      await sweepExpiredCards(store, options);
    })
      .then(
        () => {},
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
