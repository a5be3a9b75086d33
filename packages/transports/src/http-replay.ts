/** One event kept for replay: its SSE id and its data (one serialised message or batch). */
export interface ReplayEvent {
  readonly seq: number;
  readonly data: string;
}

/**
 * The last events of one session, for `Last-Event-ID` replay (transport §4.3; go-wmp keeps 200).
 * Bounded by count and by characters; the oldest go first.
 */
export class ReplayBuffer {
  readonly #events: ReplayEvent[] = [];
  #chars = 0;
  readonly #maxEvents: number;
  readonly #maxChars: number;

  constructor(maxEvents: number, maxChars: number) {
    this.#maxEvents = Math.max(0, maxEvents);
    this.#maxChars = Math.max(0, maxChars);
  }

  get size(): number {
    return this.#events.length;
  }

  push(event: ReplayEvent): void {
    this.#events.push(event);
    this.#chars += event.data.length;
    while (this.#events.length > 0 && (this.#events.length > this.#maxEvents || this.#chars > this.#maxChars)) {
      this.#chars -= this.#events.shift()!.data.length;
    }
  }

  /** The kept events with an id greater than `seq`, oldest first. */
  after(seq: number): ReplayEvent[] {
    let i = this.#events.length;
    while (i > 0 && this.#events[i - 1]!.seq > seq) i--;
    return this.#events.slice(i);
  }
}
