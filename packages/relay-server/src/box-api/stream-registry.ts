/** One open event stream: it can be ended, and woken to read its queue from its cursor. */
export interface OpenStream {
  close(): void;
  wake(): void;
}

/**
 * The open event streams of one app, bounded per key and in total (the streams of this node: each
 * holds a socket here), so `close()` can end them all and a wake-up link that reconnected can
 * make every one read its queue again.
 */
export class StreamRegistry {
  readonly #open = new Map<OpenStream, string>();
  readonly #perKey = new Map<string, number>();
  readonly #maxPerKey: number;
  readonly #max: number;

  constructor(limits: { maxPerKey: number; max: number }) {
    this.#maxPerKey = limits.maxPerKey;
    this.#max = limits.max;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Registers `stream` of `key`; undefined when a bound is reached. Returns its removal. */
  add(key: string, stream: OpenStream): (() => void) | undefined {
    const count = this.#perKey.get(key) ?? 0;
    if (count >= this.#maxPerKey || this.#open.size >= this.#max) return undefined;
    this.#open.set(stream, key);
    this.#perKey.set(key, count + 1);
    return () => this.#remove(stream);
  }

  /** Every stream reads its queue again (wake-ups may have been lost while the link was down). */
  wakeAll(): void {
    for (const stream of [...this.#open.keys()]) stream.wake();
  }

  closeAll(): void {
    for (const stream of [...this.#open.keys()]) stream.close();
    this.#open.clear();
    this.#perKey.clear();
  }

  #remove(stream: OpenStream): void {
    const key = this.#open.get(stream);
    if (key === undefined) return;
    this.#open.delete(stream);
    const left = (this.#perKey.get(key) ?? 1) - 1;
    if (left === 0) this.#perKey.delete(key);
    else this.#perKey.set(key, left);
  }
}
