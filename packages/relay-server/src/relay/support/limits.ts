/** Every bound the relay enforces (docs/architecture.md, "Bounds"), each with a default that suits one small node. */
export interface RelayLimits {
  /** Largest JSON-RPC message on any binding, in bytes; advertised as `messaging.max_size`. */
  readonly maxMessageBytes: number;
  /** Largest HTTP POST body that names no open HTTP session yet (create, resume): smaller before login. */
  readonly maxUnauthenticatedBodyBytes: number;
  /** Open WebSocket connections plus HTTP sessions. */
  readonly maxConnections: number;
  /** Of those, connections with no authenticated session: their own, smaller cap (-31007, WS 1013, HTTP 503). */
  readonly maxUnauthenticatedConnections: number;
  /** Live registered connections (devices) of one identity; more get -31007. */
  readonly maxConnectionsPerIdentity: number;
  readonly maxSessionsPerConnection: number;
  /** Sessions stored (all of them); a create beyond is -31007. */
  readonly maxSessions: number;
  /** Unauthenticated sessions stored; they live `pendingSessionTtlSeconds`. */
  readonly maxPendingSessions: number;
  /** Messages queued per recipient (`offline.max_queued`); more get -31014. */
  readonly maxQueued: number;
  /** Bytes queued per recipient; more get -31014. */
  readonly maxQueueBytes: number;
  /**
   * Messages one sender may have in one recipient's queue (docs/architecture.md, "Bounds": nobody
   * fills another's inbox); default a quarter of `maxQueued`. More get -31014 (`dropped` for
   * notifications).
   */
  readonly maxQueuedPerSender: number;
  /** Bytes one sender may have in one recipient's queue; default a quarter of `maxQueueBytes`. */
  readonly maxQueueBytesPerSender: number;
  /** Bytes queued in the whole relay, every recipient together; more get -31014. */
  readonly maxTotalQueueBytes: number;
  /**
   * Messages waiting in the outbox of one peer relay, all its remote recipients together
   * (docs/federation-profile.md). Within it, each remote recipient is held to `maxQueued`,
   * `maxQueueBytes` and each sender's share of them, as if queued here. More get -31014.
   */
  readonly maxOutboxMessages: number;
  /** Bytes waiting in the outbox of one peer relay; more get -31014. */
  readonly maxOutboxBytes: number;
  /** Messages one sender may have in the outbox of one peer relay, every recipient together; default a sixteenth of `maxOutboxMessages`. */
  readonly maxOutboxMessagesPerSender: number;
  /** Bytes one sender may have in the outbox of one peer relay; default a sixteenth of `maxOutboxBytes`. */
  readonly maxOutboxBytesPerSender: number;
  /**
   * Recipients x bytes one deliver may fan out to (a 1 MiB message to 256 made-up recipients
   * would store 256 MiB); over it: -31007 `fan-out`, nothing stored.
   */
  readonly maxFanoutBytes: number;
  /** Routed bytes (recipients x bytes) per second of one sender, connection or source (token bucket); over it: -31007. */
  readonly routedBytesPerSecond: number;
  /** Burst of that budget. */
  readonly routedBytesBurst: number;
  /**
   * Bytes per second read from one source address, every connection and request of it together,
   * each frame or request counted 512 bytes more than its size: beyond, its sockets are not read
   * and its HTTP requests get 429 until it may be read again (docs/architecture.md, "Bounds").
   */
  readonly sourceReadBytesPerSecond: number;
  /** Burst of that budget. */
  readonly sourceReadBurst: number;
  /** Sustained requests per second of one identity (token bucket); over it: -31007. */
  readonly requestsPerSecond: number;
  /** Burst size of that bucket. */
  readonly requestBurst: number;
  /**
   * `wmp.session.create`, `resume` and `join` per second of one connection (a source address gets
   * four times as many): they run before anyone logged in, so they are limited before anything
   * is stored.
   */
  readonly sessionOpensPerSecond: number;
  /** Burst of that bucket. */
  readonly sessionOpenBurst: number;
  /** Bytes queued to slow readers in the whole relay (WebSocket buffers and SSE queues). */
  readonly outboundBufferBytes: number;
  /** A connection whose unsent bytes pass this is closed (1013), whether or not it reads again. */
  readonly maxBufferedBytesPerConnection: number;
  /** Characters kept for SSE `Last-Event-ID` replay in the whole relay. */
  readonly replayBufferChars: number;
  /** Request body bytes being read at once in the whole relay (HTTP POSTs and box uploads). */
  readonly bodyBytesInFlight: number;
  /** Unexpired key packages kept per identity (each verified on publish). */
  readonly maxKeyPackagesPerIdentity: number;
  /** Key packages one publish may carry that are verified; the rest of the call is refused (bounded work). */
  readonly maxKeyPackagesPerPublish: number;
  /**
   * Key packages of one identity that others may take per hour, all callers together (in memory
   * only); beyond, its last-resort package is handed out (never consumed), or -31007.
   */
  readonly keyPackageFetchesPerTarget: number;
  /** Requests one connection has passed on through routed sessions and not yet had answered. */
  readonly maxForwardedPerConnection: number;
  /** Requests on one routed session passed on and not yet answered. */
  readonly maxForwardedPerRoute: number;
  /** Requests passed on from or to one peer relay on routed sessions (all its users together) and not yet answered. */
  readonly maxForwardedPerPeer: number;
  /** Routed sessions one identity takes part in at once (on one node). */
  readonly maxRoutesPerIdentity: number;
  /** Routed sessions the users of one peer relay opened here, together (on one node). */
  readonly maxRoutesPerPeer: number;
  /** Creates one identity may offer to another party per second (shared by a cluster's nodes). */
  readonly routeOffersPerSecond: number;
  /** Burst of that bucket. */
  readonly routeOfferBurst: number;
  /** Session records a cluster node keeps copies of (its session cache, docs/architecture.md "Cluster"). */
  readonly sessionCacheEntries: number;
  /** Characters (as JSON) of those copies, all together. */
  readonly sessionCacheChars: number;
  /** Evidence records the repository holds (wmp-tables §9); past it a message under evidence is refused (-31009). */
  readonly maxEvidenceRecords: number;
}

/** Retention and timing. */
export interface RelayTimings {
  /** Default message lifetime when neither `expires_at` nor the session's `offline.ttl` says (`offline.ttl`). */
  readonly messageTtlSeconds: number;
  /** Upper bound for any message lifetime, whatever the sender asks. */
  readonly maxMessageTtlSeconds: number;
  /** How long a `wmp.relay.register` holds (bounded by the session's own expiry). */
  readonly registrationTtlSeconds: number;
  /** An unauthenticated session lives this long (then its negotiated lifetime, once authenticated). */
  readonly pendingSessionTtlSeconds: number;
  /** A connection or HTTP session with no authenticated session is closed after this long. */
  readonly unauthenticatedTimeoutMs: number;
  /** A request body must arrive within this long (then 408). */
  readonly bodyTimeoutMs: number;
  /** How often the expiry sweeper runs. */
  readonly sweepIntervalMs: number;
  /** Longest a published key package is handed out (its own lifetime, usually 30 d, may end it sooner). */
  readonly keyPackageTtlSeconds: number;
  /** Rows per sweep transaction, and most transactions per run (the rest waits for the next run). */
  readonly sweepBatch: number;
  readonly sweepBatchesPerRun: number;
  /** A refusal of one cause is logged at most once per this interval (with how many there were). */
  readonly refusalLogIntervalMs: number;
  /**
   * A cluster node reads every local endpoint's queue this often anyway (a lost wake-up costs at
   * most this much latency); unused with the relay's own single-process coordination.
   */
  readonly safetyPollMs: number;
  /** How long the other party has to answer an offered create before the relay hosts the session. */
  readonly routeOfferTimeoutMs: number;
  /** How long a request passed through a routed session waits for its answer (then -32603 `peer_timeout`). */
  readonly routedRequestTimeoutMs: number;
  /**
   * How long a cluster node serves its copy of a session record at most. Changes reach the other
   * nodes at once through the coordination; this bounds what a change note that was lost costs
   * (a writer that could not reach Redis, a node of an older version).
   */
  readonly sessionCacheMs: number;
  /** How often scheduled messages (`wmp.deliver_after`) are looked for: the latest they go out after their time. */
  readonly scheduleIntervalMs: number;
  /** How long a node's claim of a due message holds: one that died with it leaves it due again after this. */
  readonly scheduleLeaseMs: number;
  /**
   * Longest a message written to a live connection waits for its `delivered` mark (marks are
   * written together, this long after the first that waits): an acknowledgement before it says
   * `delivered` and no mark is written (decision 0730).
   */
  readonly deliveredMarkDelayMs: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_RELAY_LIMITS: RelayLimits = Object.freeze({
  maxMessageBytes: MiB,
  maxUnauthenticatedBodyBytes: 64 * 1024,
  maxConnections: 10_000,
  maxUnauthenticatedConnections: 1_000,
  maxConnectionsPerIdentity: 16,
  maxSessionsPerConnection: 16,
  maxSessions: 100_000,
  maxPendingSessions: 5_000,
  maxQueued: 1000,
  maxQueueBytes: 16 * MiB,
  maxQueuedPerSender: 250,
  maxQueueBytesPerSender: 4 * MiB,
  maxTotalQueueBytes: 1024 * MiB,
  maxOutboxMessages: 100_000,
  maxOutboxBytes: 256 * MiB,
  maxOutboxMessagesPerSender: 6_250,
  maxOutboxBytesPerSender: 16 * MiB,
  maxFanoutBytes: 4 * MiB,
  routedBytesPerSecond: 256 * 1024,
  routedBytesBurst: 16 * MiB,
  sourceReadBytesPerSecond: 2 * MiB,
  sourceReadBurst: 8 * MiB,
  requestsPerSecond: 200,
  requestBurst: 400,
  sessionOpensPerSecond: 5,
  sessionOpenBurst: 20,
  outboundBufferBytes: 256 * MiB,
  maxBufferedBytesPerConnection: 4 * MiB,
  replayBufferChars: 64 * MiB,
  bodyBytesInFlight: 128 * MiB,
  maxKeyPackagesPerIdentity: 100,
  maxKeyPackagesPerPublish: 16,
  keyPackageFetchesPerTarget: 10,
  maxForwardedPerConnection: 64,
  maxForwardedPerRoute: 32,
  maxForwardedPerPeer: 1024,
  maxRoutesPerIdentity: 256,
  maxRoutesPerPeer: 10_000,
  routeOffersPerSecond: 2,
  routeOfferBurst: 10,
  sessionCacheEntries: 10_000,
  sessionCacheChars: 16 * MiB,
  maxEvidenceRecords: 10_000_000,
});

export const DEFAULT_RELAY_TIMINGS: RelayTimings = Object.freeze({
  messageTtlSeconds: 24 * 3600,
  maxMessageTtlSeconds: 30 * 24 * 3600,
  registrationTtlSeconds: 3600,
  pendingSessionTtlSeconds: 60,
  unauthenticatedTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  keyPackageTtlSeconds: 30 * 24 * 3600,
  sweepIntervalMs: 30_000,
  sweepBatch: 1000,
  sweepBatchesPerRun: 10,
  refusalLogIntervalMs: 60_000,
  safetyPollMs: 5_000,
  routeOfferTimeoutMs: 10_000,
  routedRequestTimeoutMs: 60_000,
  sessionCacheMs: 1_000,
  scheduleIntervalMs: 1_000,
  scheduleLeaseMs: 30_000,
  deliveredMarkDelayMs: 100,
});

export interface ResolvedConfig {
  readonly limits: RelayLimits;
  readonly timings: RelayTimings;
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** What of a relay's config its bounds come from (a `RelayConfig` is one). */
export interface LimitsInput {
  readonly limits?: Partial<RelayLimits>;
  readonly timings?: Partial<RelayTimings>;
}

/** Merges the defaults and refuses a bound that is not a positive integer, at construction. */
export function resolveConfig(config: LimitsInput): ResolvedConfig {
  const asked = config.limits ?? {};
  const limits = {
    ...DEFAULT_RELAY_LIMITS,
    // A sender's share follows the recipient caps it is a share of, unless set itself.
    maxQueuedPerSender: Math.max(1, Math.floor((asked.maxQueued ?? DEFAULT_RELAY_LIMITS.maxQueued) / 4)),
    maxQueueBytesPerSender: Math.max(1, Math.floor((asked.maxQueueBytes ?? DEFAULT_RELAY_LIMITS.maxQueueBytes) / 4)),
    maxOutboxMessagesPerSender: Math.max(
      1,
      Math.floor((asked.maxOutboxMessages ?? DEFAULT_RELAY_LIMITS.maxOutboxMessages) / 16),
    ),
    maxOutboxBytesPerSender: Math.max(
      1,
      Math.floor((asked.maxOutboxBytes ?? DEFAULT_RELAY_LIMITS.maxOutboxBytes) / 16),
    ),
    ...asked,
  };
  const timings = { ...DEFAULT_RELAY_TIMINGS, ...config.timings };
  for (const [k, v] of Object.entries(limits)) positive(v, `limits.${k}`);
  for (const [k, v] of Object.entries(timings)) positive(v, `timings.${k}`);
  return { limits: Object.freeze(limits), timings: Object.freeze(timings) };
}
