import { closeSync, fsync, openSync } from 'node:fs';
import { resolve } from 'node:path';

/** Makes what was written so far durable, then calls `done` (with the error if it could not). */
export interface DurableSync {
  after(done: (error: Error | null) => void): void;
  close(): void;
}

/**
 * fsync of a WAL file on the libuv thread pool, so the event loop keeps serving while the disk
 * flushes (the database runs with `synchronous=NORMAL`: COMMIT only writes the WAL, and this is
 * the flush that `synchronous=FULL` would have done inside COMMIT). Calls are coalesced: those
 * arriving while one fsync runs share the next one, which covers everything written before it.
 * fsync flushes the file, not the descriptor, so our own descriptor covers SQLite's writes.
 */
export class WalFileSync implements DurableSync {
  readonly #path: string;
  #fd: number | undefined;
  #running = false;
  #waiting: Array<(error: Error | null) => void> = [];

  constructor(walPath: string) {
    this.#path = resolve(walPath); // the process may change directory later
  }

  after(done: (error: Error | null) => void): void {
    this.#waiting.push(done);
    if (!this.#running) this.#start();
  }

  #start(): void {
    const batch = this.#waiting;
    this.#waiting = [];
    let fd: number;
    try {
      // Opened at the first sync: SQLite creates the WAL file at the first write.
      this.#fd ??= openSync(this.#path, 'r+');
      fd = this.#fd;
    } catch (error) {
      for (const done of batch) done(error as Error);
      return;
    }
    this.#running = true;
    fsync(fd, (error) => {
      this.#running = false;
      for (const done of batch) done(error);
      if (this.#waiting.length > 0) this.#start();
    });
  }

  /** Closes the descriptor; call after the last `after` has called back. */
  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}
