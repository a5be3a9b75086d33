import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The worker: plain CommonJS (it loads the same from sources, a build or a test runner), its own
 * connection to the file, one PASSIVE checkpoint per message. PASSIVE never waits for the writer
 * or readers: it copies what it can and the rest waits for the next one.
 */
const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('synchronous = NORMAL');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  const [row] = db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage(row);
});
`;

/** Least time between the starts of two checkpoints, so that a busy writer's pages are copied in batches. */
const MIN_INTERVAL_MS = 100;

export interface WalCheckpointerStats {
  /** Checkpoints run. */
  readonly checkpoints: number;
  /** True once the worker failed: the writer's connection checkpoints again (`onFail`). */
  readonly failed: boolean;
}

/**
 * Checkpoints a WAL database on a worker thread, so that copying pages into the database file and
 * its two fsyncs never stall the event loop: SQLite's automatic checkpoint runs inside the COMMIT
 * that crosses 1,000 pages, measured at about 50 ms every few 100-row transactions of 2.6 KB rows.
 * The writer's connection runs with `wal_autocheckpoint=0` and calls `committed()` after each
 * transaction; a checkpoint follows, at most one in flight and one per `MIN_INTERVAL_MS`. If the
 * worker fails, `onFail` gives checkpointing back to the writer's connection.
 */
export class WalCheckpointer {
  readonly #worker: Worker;
  readonly #onFail: () => void;
  #inFlight = false;
  #wanted = false;
  #timer: NodeJS.Timeout | undefined;
  #lastStart = 0;
  #checkpoints = 0;
  #failed = false;
  #closing: Promise<void> | undefined;
  #settled: (() => void) | undefined;

  /** `workerSource` replaces the worker's code (tests give one that fails). */
  constructor(path: string, onFail: () => void, workerSource = WORKER_SOURCE) {
    this.#onFail = onFail;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(workerSource, { eval: true, workerData: { path, driver } });
    this.#worker.unref();
    this.#worker.on('message', () => {
      this.#inFlight = false;
      if (this.#closing === undefined) this.#worker.unref();
      this.#checkpoints++;
      this.#settled?.();
      if (this.#wanted) this.#schedule();
    });
    this.#worker.on('error', () => this.#fail());
    this.#worker.on('exit', () => {
      if (this.#closing === undefined) this.#fail();
    });
  }

  get stats(): WalCheckpointerStats {
    return { checkpoints: this.#checkpoints, failed: this.#failed };
  }

  /** A transaction committed: a checkpoint follows. */
  committed(): void {
    if (this.#failed || this.#closing !== undefined) return;
    this.#wanted = true;
    if (!this.#inFlight && this.#timer === undefined) this.#schedule();
  }

  #schedule(): void {
    const wait = this.#lastStart + MIN_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#start();
      }, wait);
      this.#timer.unref();
      return;
    }
    this.#start();
  }

  #start(): void {
    if (this.#failed || this.#closing !== undefined || this.#inFlight) return;
    this.#wanted = false;
    this.#inFlight = true;
    this.#lastStart = performance.now();
    // Referenced only while it works: an idle checkpointer never keeps the process alive.
    this.#worker.ref();
    this.#worker.postMessage('checkpoint');
  }

  #fail(): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#inFlight = false;
    this.#settled?.();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#onFail();
  }

  /** Waits for a checkpoint in flight, then closes the worker's connection and ends the worker. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#worker.ref();
      if (this.#inFlight) await new Promise<void>((resolve) => (this.#settled = resolve));
      if (this.#failed) return;
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.postMessage('close');
      await exited;
    })();
    return this.#closing;
  }
}
