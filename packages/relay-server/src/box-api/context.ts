import type { RateLimiter } from '../coordination/contracts/rate-limiter.js';
import type { WakeUps } from '../coordination/contracts/wake-ups.js';
import type { ResolvedBoxOptions } from './options.js';
import type { StreamRegistry } from './stream-registry.js';
import type { SignatureVerifyPool } from './verify-pool.js';

/** What every handler of one box app shares. */
export interface BoxContext {
  readonly options: ResolvedBoxOptions;
  /** Per key; undefined when rate limiting is off. */
  readonly limiter: RateLimiter | undefined;
  /** Per source (when the host names sources and rate limiting is on); undefined otherwise. */
  readonly sourceLimiter: RateLimiter | undefined;
  /** Wakes the streams of a key when an event is stored for it, on every node. */
  readonly wakeUps: WakeUps;
  readonly streams: StreamRegistry;
  /** Checks event signatures off the event loop; undefined: `verifyEvent` on the event loop. */
  readonly verifier: SignatureVerifyPool | undefined;
}
