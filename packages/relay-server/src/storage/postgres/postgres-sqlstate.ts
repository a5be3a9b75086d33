// How the writer tells PostgreSQL's failures apart: a statement's own, a lost connection, one worth running again.

/** The SQLSTATE `wmp_check_totals` raises when a decision made on the totals read would have gone otherwise. */
export const STALE_TOTALS = 'WMP01';

export const sqlState = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** A connection-level failure (not a statement's error): the whole transaction is lost. */
export function isConnectionError(error: unknown): boolean {
  const code = sqlState(error);
  return code === undefined || /^(08|57P)/.test(code);
}

export const isRetryable = (error: unknown): boolean => {
  const code = sqlState(error);
  return code === '40P01' || code === '40001';
};
