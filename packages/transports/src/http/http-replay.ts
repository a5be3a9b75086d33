import type { ByteBudget } from '../byte-budget.js';

/** One event kept for replay: its SSE id and its data (one serialised message or batch). */
export interface ReplayEvent {
  readonly seq: number;
  readonly data: string;
}

/**
 * The last events of one session, for `Last-Event-ID` replay (transport §4.3; go-wmp keeps 200).
 * Bounded by count and by characters, and by a budget shared by every session
 * (docs/architecture.md, "Bounds"): when it is spent, this session's oldest events go first, and an
 * event that still does not fit is not kept (it was sent live; the durable queue, not this buffer,
 * is what guarantees delivery).
 */
export class ReplayBuffer {
  readonly #events: ReplayEvent[] = [];
  #chars = 0;
  readonly #maxEvents: number;
  readonly #maxChars: number;
  readonly #budget: ByteBudget | undefined;

  constructor(maxEvents: number, maxChars: number, budget?: ByteBudget) {
    this.#maxEvents = Math.max(0, maxEvents);
    this.#maxChars = Math.max(0, maxChars);
    this.#budget = budget;
  }

  get size(): number {
    return this.#events.length;
  }

  push(event: ReplayEvent): void {
    const size = event.data.length;
    if (this.#maxEvents === 0 || size > this.#maxChars) return;
    while (this.#events.length > 0 && (this.#events.length >= this.#maxEvents || this.#chars + size > this.#maxChars)) {
      this.#dropOldest();
    }
    while (this.#budget && !this.#budget.tryReserve(size)) {
      if (this.#events.length === 0) return;
      this.#dropOldest();
    }
    this.#events.push(event);
    this.#chars += size;
  }

  /** The kept events with an id greater than `seq`, oldest first. */
  after(seq: number): ReplayEvent[] {
    let i = this.#events.length;
    while (i > 0 && this.#events[i - 1]!.seq > seq) i--;
    return this.#events.slice(i);
  }

  /** Forgets everything (the session ended), giving its part of the budget back. */
  clear(): void {
    this.#budget?.release(this.#chars);
    this.#events.length = 0;
    this.#chars = 0;
  }

  #dropOldest(): void {
    const size = this.#events.shift()!.data.length;
    this.#chars -= size;
    this.#budget?.release(size);
  }
}
