// How a failure of node-postgres is told to callers: the server out of reach (down, wrong host,
// refused credentials, no database, a lost connection) versus anything else.
import { StoreUnavailableError, StoreWriteError } from '../errors.js';

/** The StoreUnavailableError for a failure to connect or to run a read, or undefined when it is no such failure. */
export function unavailable(error: unknown): StoreUnavailableError | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === '28P01' || code === '28000') return new StoreUnavailableError('credentials', error);
  if (code === '3D000') return new StoreUnavailableError('no_database', error);
  if (typeof code === 'string' && /^(08|57P0[123])/.test(code)) return new StoreUnavailableError('unreachable', error);
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new StoreUnavailableError('unreachable', error); // ECONNREFUSED...
  const message = error instanceof Error ? error.message : '';
  if (/Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable/i.test(message)) {
    return new StoreUnavailableError('unreachable', error);
  }
  return undefined;
}

/** The `StoreWriteError` for a write that could not commit, `unavailable` when the server was out of reach. */
export function writeFailure(error: unknown): StoreWriteError {
  return new StoreWriteError(error, { unavailable: unavailable(error) !== undefined });
}
