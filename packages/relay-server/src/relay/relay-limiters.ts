import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from '@wmp/session';
import type { RateLimiter } from '../coordination/contracts/rate-limiter.js';
import { TokenBuckets } from '../coordination/memory/token-buckets.js';
import type { RelayLimits } from './config.js';
import type { RefusalLog } from './refusals.js';

/** A source address gets this many times a connection's budget (several clients share one address). */
const SOURCE_FACTOR = 4;

/**
 * The relay's budgets that a fresh identity cannot reset (DESIGN §7): session opens per connection
 * and per source address, and routed bytes (recipients x bytes) per sender, connection and
 * source. Rate windows are in memory only; addresses are keys here and nowhere else.
 */
export interface RelayLimiters {
  /** One request (or `cost` for a call that does that much work) of the identity, else of the connection; -31007 beyond. */
  chargeRequests(sender: string | undefined, connection: Connection, refusals: RefusalLog, cost?: number): void;
  /** `wmp.session.create` / `resume` / `join`: throws -31007 over the connection's or the source's rate. */
  admitOpen(connection: Connection, refusals: RefusalLog): void;
  /** Spends `bytes` of the sender's, the connection's and the source's routing budgets; -31007 beyond. */
  chargeRouted(sender: string, connection: Connection, bytes: number, refusals: RefusalLog): void;
  rateLimited(reason: string): InstanceType<typeof RateLimitedError>;
}

/** IPv4 127/8, IPv6 ::1 and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * `sourceOf` maps a connection's address to the key its source is limited by, or undefined when
 * the source is not limited (no address, or loopback behind a local proxy).
 */
export function relayLimiters(
  limits: RelayLimits,
  now: () => number,
  sourceOf: (address: string | undefined) => string | undefined,
): RelayLimiters {
  const buckets = (perSecond: number, burst: number): RateLimiter => new TokenBuckets({ perSecond, burst, now });
  const requests = buckets(limits.requestsPerSecond, limits.requestBurst);
  const opens = buckets(limits.sessionOpensPerSecond, limits.sessionOpenBurst);
  const opensBySource = buckets(limits.sessionOpensPerSecond * SOURCE_FACTOR, limits.sessionOpenBurst * SOURCE_FACTOR);
  const routed = buckets(limits.routedBytesPerSecond, limits.routedBytesBurst);
  const routedBySource = buckets(limits.routedBytesPerSecond * SOURCE_FACTOR, limits.routedBytesBurst * SOURCE_FACTOR);
  const rateLimited = (reason: string) => new RateLimitedError({ reason });
  // The memory buckets answer synchronously; a distributed limiter is wired where it may await.
  const take = (limiter: RateLimiter, key: string, cost = 1) => limiter.take(key, cost) === true;

  return {
    rateLimited,
    chargeRequests(sender, connection, refusals, cost = 1) {
      if (!take(requests, sender ?? `c:${connection.id}`, cost)) {
        refusals.note('request_rate');
        throw rateLimited('request rate');
      }
    },
    admitOpen(connection, refusals) {
      const source = sourceOf(connection.remoteAddress);
      if (!take(opens, `c:${connection.id}`) || (source !== undefined && !take(opensBySource, source))) {
        refusals.note('session_open_rate');
        throw rateLimited('session open rate');
      }
    },
    chargeRouted(sender, connection, bytes, refusals) {
      const source = sourceOf(connection.remoteAddress);
      const ok =
        take(routed, `i:${sender}`, bytes) &&
        take(routed, `c:${connection.id}`, bytes) &&
        (source === undefined || take(routedBySource, source, bytes));
      if (!ok) {
        refusals.note('routed_bytes');
        throw rateLimited('routed bytes');
      }
    },
  };
}
