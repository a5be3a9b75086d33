/**
 * Runs a group's work one task at a time, in the order it was queued: incoming messages, commits
 * of ours and encryption all touch the one MLS state, and a commit of ours holds everything that
 * arrives until the relay has answered it.
 */
export class TaskQueue {
  readonly #max: number;
  #tail: Promise<void> = Promise.resolve();
  #size = 0;

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#size;
  }

  /** Runs `task` after everything queued before it (our own operations: never refused). */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.#size++;
    const run = this.#tail.then(task);
    this.#tail = run.then(
      () => void this.#size--,
      () => void this.#size--,
    );
    return run;
  }

  /** As `run`, or undefined when `max` tasks wait already (an incoming message then stays at the relay). */
  offer<T>(task: () => Promise<T>): Promise<T> | undefined {
    return this.#size >= this.#max ? undefined : this.run(task);
  }

  /** Resolves once everything queued so far has run. */
  idle(): Promise<void> {
    return this.#tail;
  }
}

/** Ids per `wmp.message.ack` (the schema's limit). */
const MAX_IDS_PER_ACK = 500;

/**
 * `wmp.message.ack` for group messages the group consumed itself (commits, Welcomes, messages it
 * could never read), batched within one turn of the event loop. A lost ack only means the relay
 * delivers the message again, and the group recognises it by its id.
 */
export class AckBatch {
  readonly #send: (ids: string[]) => Promise<unknown>;
  #ids: string[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(send: (ids: string[]) => Promise<unknown>) {
    this.#send = send;
  }

  add(id: string): void {
    this.#ids.push(id);
    if (this.#ids.length >= MAX_IDS_PER_ACK) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), 0);
  }

  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const ids = this.#ids;
    this.#ids = [];
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < ids.length; i += MAX_IDS_PER_ACK) {
      sends.push(this.#send(ids.slice(i, i + MAX_IDS_PER_ACK)).catch(() => undefined));
    }
    await Promise.all(sends);
  }
}
