/**
 * A shared bound on bytes held across many connections (docs/architecture.md, "Bounds": the totals,
 * not only the parts): outbound buffers of slow readers, SSE replay buffers, request bodies being
 * read. Each holder reserves before it holds and releases what it reserved; a reservation that does
 * not fit is refused, and the holder refuses in turn (closes a slow reader, drops a replay event,
 * answers 503). Pure and synchronous, so it is exact within one process.
 */
export class ByteBudget {
  readonly limit: number;
  #used = 0;
  #refusals = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a byte budget must be a positive integer');
    this.limit = limit;
  }

  /** Bytes reserved now. */
  get used(): number {
    return this.#used;
  }

  /** Reservations refused so far (for metrics). */
  get refusals(): number {
    return this.#refusals;
  }

  /** Reserves `bytes`; false (nothing reserved) when they do not fit. */
  tryReserve(bytes: number): boolean {
    if (this.#used + bytes > this.limit) {
      this.#refusals++;
      return false;
    }
    this.#used += bytes;
    return true;
  }

  /** Gives back bytes a holder reserved. */
  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}
