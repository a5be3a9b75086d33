/** An adapter under test, as the shared suites see it. */
export interface Harness<S> {
  readonly store: S;
  /** Closes the storage (the suites check every later call is refused). */
  close(): Promise<void>;
  /** Closes and opens the same storage again: only durable adapters have it. */
  readonly reopen?: () => Promise<Harness<S>>;
}

/**
 * Tracks the harnesses a test opened so `afterEach` closes them, whatever the test did.
 */
export class Harnesses<S, C> {
  readonly #open: Harness<S>[] = [];
  readonly #factory: (config: C) => Promise<Harness<S>>;

  constructor(factory: (config: C) => Promise<Harness<S>>) {
    this.#factory = factory;
  }

  async open(config: C): Promise<Harness<S>> {
    return this.track(await this.#factory(config));
  }

  track(harness: Harness<S>): Harness<S> {
    this.#open.push(harness);
    return harness;
  }

  async reopen(harness: Harness<S>): Promise<Harness<S>> {
    if (!harness.reopen) throw new Error('adapter is not durable');
    return this.track(await harness.reopen());
  }

  async closeAll(): Promise<void> {
    for (const h of this.#open.splice(0)) await h.close();
  }
}
