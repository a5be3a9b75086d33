/** A listener; a returned promise is awaited where the emitter waits (messages are acknowledged after it). */
export type Listener<T> = (event: T) => void | Promise<void>;

/**
 * A typed event emitter: `on` returns the function that removes the listener. A listener that
 * throws (or rejects) never breaks the emitter or the other listeners: its error goes to
 * `onListenerError`.
 */
export class Emitter<E extends object> {
  readonly #listeners = new Map<keyof E, Set<Listener<never>>>();
  readonly #onListenerError: (error: unknown, event: keyof E) => void;

  constructor(onListenerError: (error: unknown, event: keyof E) => void) {
    this.#onListenerError = onListenerError;
  }

  on<K extends keyof E>(event: K, listener: Listener<E[K]>): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    // A wrapper per call, so that the same function added twice is removed once per unsubscribe.
    const entry: Listener<never> = (value) => listener(value as E[K]);
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  count(event: keyof E): number {
    return this.#listeners.get(event)?.size ?? 0;
  }

  /** Calls every listener now; async ones run on and their failures are reported. */
  emit<K extends keyof E>(event: K, value: E[K]): void {
    void this.emitAndWait(event, value);
  }

  /** Calls every listener and resolves once the promises they returned have settled. */
  async emitAndWait<K extends keyof E>(event: K, value: E[K]): Promise<void> {
    const set = this.#listeners.get(event);
    if (!set || set.size === 0) return;
    const waits: Promise<void>[] = [];
    for (const listener of [...set]) {
      try {
        const returned = (listener as Listener<E[K]>)(value);
        if (returned && typeof (returned as Promise<void>).then === 'function') {
          waits.push((returned as Promise<void>).catch((e: unknown) => this.#onListenerError(e, event)));
        }
      } catch (e) {
        this.#onListenerError(e, event);
      }
    }
    if (waits.length > 0) await Promise.all(waits);
  }

  clear(): void {
    this.#listeners.clear();
  }
}
