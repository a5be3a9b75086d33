import { NonceCacheFullError } from '@wmp/ohan-seal';
import { ReplayCacheUnavailableError } from '@wmp/session';

// @wmp/session's own class (DPoP answers -31007 `replay_cache_unavailable` with it); a
// `ReplayCacheFullError` too, so every caller that fails closed on a full cache fails closed here.
export { ReplayCacheUnavailableError };

/**
 * The shared coordination backend (Redis) could not answer: down, unreachable, or too slow
 * (past the command timeout). Thrown only where a contract cannot answer without it
 * (`PresenceDirectory.nodesOf`); fixed message, the driver's error in `cause` for the logs.
 */
export class CoordinationUnavailableError extends Error {
  readonly code = 'ERR_COORDINATION_UNAVAILABLE';
  constructor(options?: { cause?: unknown }) {
    super('coordination unavailable', options);
    this.name = 'CoordinationUnavailableError';
  }
}

/**
 * The nonce cache cannot check a nonce because its backend is unreachable. A `NonceCacheFullError`
 * on purpose: every caller that fails closed on a full cache (the box answers 503) fails closed on
 * an outage with no change; `isCoordinationUnavailable` tells the two apart.
 */
export class NonceCacheUnavailableError extends NonceCacheFullError {
  constructor(options?: { cause?: unknown }) {
    super();
    this.message = 'nonce cache unavailable';
    this.name = 'NonceCacheUnavailableError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** Whether `error` means "the coordination backend could not answer" (any of the three classes). */
export function isCoordinationUnavailable(error: unknown): boolean {
  return (
    error instanceof CoordinationUnavailableError ||
    error instanceof NonceCacheUnavailableError ||
    error instanceof ReplayCacheUnavailableError
  );
}
