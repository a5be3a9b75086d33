import { RateLimitedError } from '@wmp/jsonrpc-envelope';
import type { Connection } from '@wmp/session';
import type { Coordination } from '../../coordination/contracts/coordination.js';
import type { RateLimiter } from '../../coordination/contracts/rate-limiter.js';
import { TokenBuckets } from '../../coordination/memory/token-buckets.js';
import type { RelayLimits } from './limits.js';
import type { RefusalLog } from './refusals.js';

/** A source address gets this many times a connection's budget (several clients share one address). */
const SOURCE_FACTOR = 4;

/**
 * The relay's budgets that a fresh identity cannot reset (docs/architecture.md, "Bounds"): session
 * opens per connection and per source address, and routed bytes (recipients x bytes) per sender,
 * connection and source. What is keyed by identity or source is shared by the nodes of a cluster
 * (the coordination's buckets: a client gains nothing by spreading over nodes); what is keyed by
 * connection stays on its node. Rate windows are never on disk; addresses are keys here and
 * nowhere else.
 */
export interface RelayLimiters {
  /** One request (or `cost` for a call that does that much work) of the identity, else of the connection; -31007 beyond. */
  chargeRequests(
    sender: string | undefined,
    connection: Connection,
    refusals: RefusalLog,
    cost?: number,
  ): Promise<void>;
  /** `wmp.session.create` / `resume` / `join`: rejects -31007 over the connection's or the source's rate. */
  admitOpen(connection: Connection, refusals: RefusalLog): Promise<void>;
  /** Spends `bytes` of the sender's, the connection's and the source's routing budgets; -31007 beyond. */
  chargeRouted(sender: string, connection: Connection, bytes: number, refusals: RefusalLog): Promise<void>;
  rateLimited(reason: string): InstanceType<typeof RateLimitedError>;
}

/**
 * `sourceOf` maps a connection's address to the key its source is limited by, or undefined when
 * the source is not limited (no address, or loopback behind a local proxy).
 */
export function relayLimiters(
  limits: RelayLimits,
  coordination: Coordination,
  now: () => number,
  sourceOf: (address: string | undefined) => string | undefined,
): RelayLimiters {
  const local = (perSecond: number, burst: number): RateLimiter => new TokenBuckets({ perSecond, burst, now });
  const shared = (name: string, perSecond: number, burst: number): RateLimiter =>
    coordination.rateLimiter(name, { perSecond, burst, now });
  const requests = shared('requests', limits.requestsPerSecond, limits.requestBurst);
  const connectionRequests = local(limits.requestsPerSecond, limits.requestBurst);
  const opens = local(limits.sessionOpensPerSecond, limits.sessionOpenBurst);
  const opensBySource = shared(
    'opens-by-source',
    limits.sessionOpensPerSecond * SOURCE_FACTOR,
    limits.sessionOpenBurst * SOURCE_FACTOR,
  );
  const routed = shared('routed', limits.routedBytesPerSecond, limits.routedBytesBurst);
  const connectionRouted = local(limits.routedBytesPerSecond, limits.routedBytesBurst);
  const routedBySource = shared(
    'routed-by-source',
    limits.routedBytesPerSecond * SOURCE_FACTOR,
    limits.routedBytesBurst * SOURCE_FACTOR,
  );
  const rateLimited = (reason: string) => new RateLimitedError({ reason });
  // A connection's key and source are fixed for its life: worked out once, not per routed message
  // (parsing the address was about 2 µs of each).
  const keys = new WeakMap<Connection, { readonly key: string; readonly source: string | undefined }>();
  const keysOf = (connection: Connection) => {
    let found = keys.get(connection);
    if (found === undefined) {
      found = { key: `c:${connection.id}`, source: sourceOf(connection.remoteAddress) };
      keys.set(connection, found);
    }
    return found;
  };
  const connectionKey = (connection: Connection) => keysOf(connection).key;

  return {
    rateLimited,
    async chargeRequests(sender, connection, refusals, cost = 1) {
      const ok =
        sender === undefined
          ? await connectionRequests.take(connectionKey(connection), cost)
          : await requests.take(sender, cost);
      if (!ok) {
        refusals.note('request_rate');
        throw rateLimited('request rate');
      }
    },
    async admitOpen(connection, refusals) {
      const { source } = keysOf(connection);
      const ok =
        (await opens.take(connectionKey(connection))) && (source === undefined || (await opensBySource.take(source)));
      if (!ok) {
        refusals.note('session_open_rate');
        throw rateLimited('session open rate');
      }
    },
    async chargeRouted(sender, connection, bytes, refusals) {
      const { key, source } = keysOf(connection);
      // The shared buckets in one round (a cluster's are remote); the connection's here.
      const [bySender, bySource] =
        source === undefined
          ? [await routed.take(sender, bytes), true]
          : await Promise.all([routed.take(sender, bytes), routedBySource.take(source, bytes)]);
      if (!(bySender && bySource && (await connectionRouted.take(key, bytes)))) {
        refusals.note('routed_bytes');
        throw rateLimited('routed bytes');
      }
    },
  };
}
