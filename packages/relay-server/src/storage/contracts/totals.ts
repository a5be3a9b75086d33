/** Running totals of a queue, a sender or a store: kept with every insert and delete, read in O(1). */
export interface Totals {
  readonly count: number;
  readonly bytes: number;
}

export const EMPTY_TOTALS: Totals = Object.freeze({ count: 0, bytes: 0 });
