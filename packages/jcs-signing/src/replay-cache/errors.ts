import { JcsSigningError } from '../errors.js';

/**
 * Why a replay cache refused (a WMP answer's -31007 `data.reason`): no room without forgetting an
 * unexpired entry, or no answer from its backend.
 */
export type ReplayCacheRefusalReason = 'replay_cache_full' | 'replay_cache_unavailable';

const REFUSALS: Readonly<Record<ReplayCacheRefusalReason, { code: string; message: string }>> = {
  replay_cache_full: { code: 'ERR_REPLAY_CACHE_FULL', message: 'replay cache full' },
  replay_cache_unavailable: { code: 'ERR_REPLAY_CACHE_UNAVAILABLE', message: 'replay cache unavailable' },
};

/**
 * A replay cache that cannot take an entry without forgetting an unexpired one: what it was asked
 * cannot be checked, so the caller refuses (DPoP -31007, the box 503).
 */
export class ReplayCacheFullError extends JcsSigningError {
  readonly reason: ReplayCacheRefusalReason;
  constructor(options?: { cause?: unknown }, reason: ReplayCacheRefusalReason = 'replay_cache_full') {
    super(REFUSALS[reason].code, REFUSALS[reason].message, options);
    this.name = 'ReplayCacheFullError';
    this.reason = reason;
  }
}

/**
 * A replay cache whose backend (Redis) does not answer. A `ReplayCacheFullError` on purpose: a
 * caller that refuses when the cache is full refuses during an outage with no change; `reason`
 * tells the two apart. The driver's error is in `cause`, for the logs.
 */
export class ReplayCacheUnavailableError extends ReplayCacheFullError {
  declare readonly reason: 'replay_cache_unavailable';
  constructor(options?: { cause?: unknown }) {
    super(options, 'replay_cache_unavailable');
    this.name = 'ReplayCacheUnavailableError';
  }
}

/** The refusal reason of an error a `ReplayCache` rejected with; undefined for any other error. */
export function replayCacheRefusalReason(error: unknown): ReplayCacheRefusalReason | undefined {
  return error instanceof ReplayCacheFullError ? error.reason : undefined;
}
