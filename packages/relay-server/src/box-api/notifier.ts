export type Wake = () => void;

/**
 * In-process wake-ups: a publish stored for a recipient wakes that recipient's open streams, which
 * then read the store from their cursor (the notice carries nothing, so a missed or merged wake-up
 * loses no event). Bounded per key and in total; a distributed box would replace it with a
 * pub/sub channel behind the same two calls.
 */
export class BoxNotifier {
  readonly #listeners = new Map<string, Set<Wake>>();
  readonly #maxPerKey: number;
  readonly #max: number;
  #count = 0;

  constructor(options: { maxPerKey: number; max: number }) {
    this.#maxPerKey = options.maxPerKey;
    this.#max = options.max;
  }

  get size(): number {
    return this.#count;
  }

  /** Registers `wake` for `key`; undefined when a bound is reached. Returns the unsubscribe. */
  subscribe(key: string, wake: Wake): (() => void) | undefined {
    let set = this.#listeners.get(key);
    if ((set?.size ?? 0) >= this.#maxPerKey || this.#count >= this.#max) return undefined;
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(key, set);
    }
    set.add(wake);
    this.#count++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      set.delete(wake);
      this.#count--;
      if (set.size === 0) this.#listeners.delete(key);
    };
  }

  notify(key: string): void {
    const set = this.#listeners.get(key);
    if (set === undefined) return;
    for (const wake of [...set]) wake();
  }
}
