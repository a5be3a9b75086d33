import {
  DEFAULT_WAKE_UP_LIMITS,
  MAX_WAKE_BODY_CHARS,
  MAX_WAKE_NOTE_CHARS,
  type WakeHandler,
  type WakeUnsubscribe,
  type WakeUpLimits,
  type WakeUps,
} from '../contracts/wake-ups.js';

/** What nodes of one process share: who listens to which recipient (the memory "pub/sub"). */
export class MemoryWakeBus {
  readonly #listeners = new Map<string, Set<MemoryWakeUps>>();

  /** @internal */
  join(recipient: string, node: MemoryWakeUps): void {
    let set = this.#listeners.get(recipient);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(recipient, set);
    }
    set.add(node);
  }

  /** @internal */
  leave(recipient: string, node: MemoryWakeUps): void {
    const set = this.#listeners.get(recipient);
    set?.delete(node);
    if (set?.size === 0) this.#listeners.delete(recipient);
  }

  /** Wakes every node listening to `recipient`, the others with `body`; returns how many. */
  deliver(recipient: string, seq: number | undefined, from?: MemoryWakeUps, body?: string): number {
    const set = this.#listeners.get(recipient);
    if (set === undefined) return 0;
    for (const node of [...set]) node.wake(recipient, seq, undefined, node === from ? undefined : body);
    return set.size;
  }

  /** Hands a note to every node listening to `recipient` but `from`; returns how many. */
  note(recipient: string, note: string, from: MemoryWakeUps): number {
    let n = 0;
    for (const node of [...(this.#listeners.get(recipient) ?? [])]) {
      if (node === from) continue;
      node.wake(recipient, undefined, note);
      n++;
    }
    return n;
  }
}

/**
 * Wake-ups in memory: the handlers of this node, on a bus that several nodes of one process may
 * share (by default a bus of its own). Synchronous, never lost, never reconnects; bounded per
 * recipient and in total like the box's stream notifier it replaces.
 */
export class MemoryWakeUps implements WakeUps {
  readonly #bus: MemoryWakeBus;
  readonly #handlers = new Map<string, Set<WakeHandler>>();
  readonly #maxPerKey: number;
  readonly #max: number;
  readonly #onError: (error: unknown) => void;
  #count = 0;

  readonly #maxNoteChars: number;
  readonly #maxBodyChars: number;

  constructor(
    options: {
      bus?: MemoryWakeBus;
      limits?: WakeUpLimits;
      onError?: (error: unknown) => void;
      maxNoteChars?: number;
      maxBodyChars?: number;
    } = {},
  ) {
    this.#bus = options.bus ?? new MemoryWakeBus();
    this.#maxNoteChars = options.maxNoteChars ?? MAX_WAKE_NOTE_CHARS;
    this.#maxBodyChars = options.maxBodyChars ?? MAX_WAKE_BODY_CHARS;
    this.#maxPerKey = options.limits?.maxPerKey ?? DEFAULT_WAKE_UP_LIMITS.maxPerKey;
    this.#max = options.limits?.max ?? DEFAULT_WAKE_UP_LIMITS.max;
    this.#onError = options.onError ?? (() => {});
  }

  /** Handlers held by this node. */
  get size(): number {
    return this.#count;
  }

  async publish(recipient: string, seq?: number, body?: string): Promise<number> {
    const carried = seq !== undefined && body !== undefined && body.length <= this.#maxBodyChars ? body : undefined;
    return this.#bus.deliver(recipient, seq, this, carried);
  }

  async notify(recipient: string, note: string): Promise<number> {
    if (note.length > this.#maxNoteChars) return 0;
    return this.#bus.note(recipient, note, this);
  }

  async subscribe(recipient: string, handler: WakeHandler): Promise<WakeUnsubscribe | undefined> {
    return this.subscribeNow(recipient, handler);
  }

  /** `subscribe`, synchronously (memory only). */
  subscribeNow(recipient: string, handler: WakeHandler): WakeUnsubscribe | undefined {
    let set = this.#handlers.get(recipient);
    if ((set?.size ?? 0) >= this.#maxPerKey || this.#count >= this.#max) return undefined;
    if (set === undefined) {
      set = new Set();
      this.#handlers.set(recipient, set);
      this.#bus.join(recipient, this);
    }
    // One registration per call, even for the same function twice.
    const own: WakeHandler = (seq, note, body) => handler(seq, note, body);
    set.add(own);
    this.#count++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (!set.delete(own)) return;
      this.#count--;
      if (set.size === 0 && this.#handlers.get(recipient) === set) {
        this.#handlers.delete(recipient);
        this.#bus.leave(recipient, this);
      }
    };
  }

  onReconnect(_handler: () => void): () => void {
    return () => {};
  }

  listening(recipient: string): boolean {
    return this.#handlers.has(recipient);
  }

  async close(): Promise<void> {
    for (const recipient of this.#handlers.keys()) this.#bus.leave(recipient, this);
    this.#handlers.clear();
    this.#count = 0;
  }

  /** @internal Called by the bus. */
  wake(recipient: string, seq: number | undefined, note?: string, body?: string): void {
    const set = this.#handlers.get(recipient);
    if (set === undefined) return;
    for (const handler of [...set]) {
      try {
        handler(seq, note, body);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
