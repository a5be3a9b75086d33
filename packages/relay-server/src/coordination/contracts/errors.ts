import { ReplayCacheUnavailableError } from '@wmp/jcs-signing';
import { RelayServerError } from '../../errors.js';

// @wmp/jcs-signing's class (DPoP answers -31007 `replay_cache_unavailable` with it, the box 503);
// a `ReplayCacheFullError` too, so every caller that fails closed on a full cache fails closed
// here. `NonceCacheUnavailableError` is the same class, under the name the box's callers know.
export { ReplayCacheUnavailableError, ReplayCacheUnavailableError as NonceCacheUnavailableError };

/**
 * The shared coordination backend (Redis) could not answer: down, unreachable, or too slow
 * (past the command timeout). Thrown only where a contract cannot answer without it
 * (`PresenceDirectory.nodesOf`); fixed message, the driver's error in `cause` for the logs.
 */
export class CoordinationUnavailableError extends RelayServerError {
  declare readonly code: 'ERR_COORDINATION_UNAVAILABLE';
  constructor(options?: { cause?: unknown }) {
    super('ERR_COORDINATION_UNAVAILABLE', 'coordination unavailable', options);
    this.name = 'CoordinationUnavailableError';
  }
}

/** Whether `error` means "the coordination backend could not answer" (either class). */
export function isCoordinationUnavailable(error: unknown): boolean {
  return error instanceof CoordinationUnavailableError || error instanceof ReplayCacheUnavailableError;
}
