// Reading what a relay sent: JSON values of unknown shape, checked where they are used.

export const isRecord = (x: unknown): x is Record<string, unknown> =>
  x !== null && typeof x === 'object' && !Array.isArray(x);

/** A non-empty string, or undefined. */
export const str = (x: unknown): string | undefined => (typeof x === 'string' && x.length > 0 ? x : undefined);
