import type { WmpSession } from '@wmp/session';

/** A received `wmp.message.deliver` (or a status kept by the relay), before the application has it. */
export interface Incoming {
  readonly session: WmpSession;
  readonly group: string | undefined;
  readonly params: Record<string, unknown>;
  /** The relay's message id: a copy of one already waiting here is not queued twice. */
  readonly id?: string | undefined;
}

/**
 * Received messages (or kept statuses), handled one at a time in arrival order. Paused while nobody listens, so that
 * nothing is acknowledged unseen; when full, a message is left out: it stays unacknowledged at
 * the relay, which delivers it again on the next resume or register.
 */
export class InboxQueue {
  readonly #max: number;
  readonly #handle: (message: Incoming) => Promise<void>;
  readonly #queue: Incoming[] = [];
  readonly #waiting = new Set<string>();
  #paused = true;
  #running = false;
  #closed = false;

  constructor(max: number, handle: (message: Incoming) => Promise<void>) {
    this.#max = max;
    this.#handle = handle;
  }

  /** False when the message was left out (full, closed, or the same id already waiting). */
  push(message: Incoming): boolean {
    if (this.#closed || this.#queue.length >= this.#max) return false;
    if (message.id !== undefined) {
      if (this.#waiting.has(message.id)) return false;
      this.#waiting.add(message.id);
    }
    this.#queue.push(message);
    void this.#run();
    return true;
  }

  setPaused(paused: boolean): void {
    this.#paused = paused;
    // Never from inside the caller (an `on('message')` that unpauses): its listener is not
    // fully set up yet, e.g. `const off = client.on('message', () => off())`.
    if (!paused) queueMicrotask(() => void this.#run());
  }

  close(): void {
    this.#closed = true;
    this.#queue.length = 0;
    this.#waiting.clear();
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (!this.#paused && !this.#closed && this.#queue.length > 0) {
        const next = this.#queue.shift()!;
        if (next.id !== undefined) this.#waiting.delete(next.id);
        await this.#handle(next);
      }
    } finally {
      this.#running = false;
    }
  }
}
