import type { Keypair, RelayHop } from '@wmp/jcs-signing';
import { BoundedSet, coreMethods, isLoopbackAddress, type ParamsOf } from '@wmp/jsonrpc-envelope';
import {
  type Connection,
  identifierProblem,
  isExpired,
  signedChallengeAuthenticator,
  type Transport,
  WmpServer,
} from '@wmp/session';
import { ByteBudget } from '@wmp/transports';
import type { Coordination } from '../coordination/contracts/coordination.js';
import { memoryCoordination } from '../coordination/memory/coordination.js';
import type { RelayStoreLimits, RelayStores } from '../storage/contracts/relay-stores.js';
import { MemoryRelayStores } from '../storage/memory/memory-store.js';
import { endpointUrls } from './sessions/auth-context.js';
import { type RelayConfig, type ResolvedConfig, relayStoreLimits, resolveConfig } from './support/limits.js';
import { deliverHook, deliverOnRoute } from './sessions/deliver.js';
import { Federation, type FederationDeps } from './federation/federation.js';
import { Forwarder } from './routing/forwarder.js';
import { relayHooks } from './sessions/hooks.js';
import { relayKeypair } from './support/identity.js';
import { type Logger, silentLogger } from './support/logger.js';
import { RelayMetrics } from './support/metrics.js';
import { notingFullStore } from './support/noted-session-store.js';
import { ObservedTransport, type TransportObserver } from './support/observed-transport.js';
import { Presence } from './presence/presence.js';
import { QueueWakeUps } from './routing/queue-wake-ups.js';
import { RefusalLog } from './support/refusals.js';
import { relayLimiters } from './support/relay-limiters.js';
import { registerRelayMethods } from './sessions/relay-methods.js';
import { ClusterPartyLinks, chainLinks } from './sessions/routed/cluster-links.js';
import { withRelayEntry } from './sessions/routed/offered.js';
import { localPartyLinks } from './sessions/routed/party-links.js';
import { RoutedSessions } from './sessions/routed/routed-sessions.js';
import type { RelayBudgets, RelayServices } from './services.js';
import { endedSessionOf, identitiesOf, sessionEndedNote } from './sessions/session-ended-notes.js';
import { StatusNotifier } from './statuses/statuses.js';
import { storeRefusalOf } from './support/store-refusal.js';
import { Sweeper } from './statuses/sweeper.js';

/** The relay without a network: the session engine with routing, queues and their bookkeeping. */
export interface RelayCore {
  readonly config: ResolvedConfig;
  readonly identity: Keypair;
  readonly stores: RelayStores;
  readonly server: WmpServer;
  readonly services: RelayServices;
  readonly metrics: RelayMetrics;
  readonly sweeper: Sweeper;
  /** What this node shares with the other nodes of its cluster (its own, on one process). */
  readonly coordination: Coordination;
  /** Cross-node wake-ups of the queues of this node's endpoints. */
  readonly wakeUps: QueueWakeUps;
  readonly logger: Logger;
  /** Memory shared by every connection (outbound buffers, replay buffers, bodies being read). */
  readonly budgets: RelayBudgets;
  /** Refusals by cause, logged once per interval. */
  readonly refusals: RefusalLog;
  /** Open connections (WebSocket connections and HTTP sessions). */
  readonly connections: number;
  /**
   * Serves one connection of any binding, counting its errors and its end; with `adopt`, the
   * connection carries that existing session from the start (an HTTP session begun on another node).
   */
  connect(transport: Transport, context?: { readonly adopt?: string }): Promise<Connection>;
  /**
   * Ends `sessionId` for the identity `connection` carries it for (an HTTP session's `DELETE`:
   * a logout), as a `wmp.session.close` would: gone from the store, so no node takes its HTTP
   * tokens or its resumption token any more, and the other nodes drop what they hold of it.
   */
  endSession(connection: Connection, sessionId: string): Promise<void>;
  /** Whether `sessionId` is still open (in the store, neither closed nor expired). */
  sessionLive(sessionId: string): Promise<boolean>;
  /**
   * The key a client address is limited by as a source (the WMP side's and the box's), or
   * undefined when it is not limited (none, or loopback unless `limitLoopback`).
   */
  sourceOf(address: string | undefined): string | undefined;
  /** Starts the sweeper and the cross-node wake-ups (with the listener). */
  start(): void;
  /** Stops them (the sweep going on is finished) and closes a coordination of its own. */
  stop(): Promise<void>;
  /** The public origin used in relay_chain entries and the well-known document. */
  origin: string;
  /** Relay-to-relay routing, when configured. */
  readonly federation: Federation | undefined;
}

/**
 * The stores, with the caps of the config. A ready store enforces its own caps, so one that
 * disagrees with caps the config sets explicitly is refused rather than silently winning (pass a
 * factory to have the config's caps applied).
 */
function openStores(input: RelayConfig, limits: RelayStoreLimits): RelayStores {
  if (typeof input.store === 'function') return input.store(limits);
  if (input.store === undefined) return new MemoryRelayStores(limits);
  const asked = input.limits ?? {};
  const { queue, sessions } = input.store;
  const differs = (wanted: number | undefined, own: number) => wanted !== undefined && wanted !== own;
  if (
    differs(asked.maxQueued, queue.limits.maxQueued) ||
    differs(asked.maxQueueBytes, queue.limits.maxBytes) ||
    differs(asked.maxQueuedPerSender, queue.limits.maxQueuedPerSender) ||
    differs(asked.maxQueueBytesPerSender, queue.limits.maxBytesPerSender) ||
    differs(asked.maxTotalQueueBytes, queue.limits.maxTotalBytes) ||
    differs(asked.maxSessions, sessions.limits.maxSessions) ||
    differs(asked.maxPendingSessions, sessions.limits.maxPendingSessions)
  ) {
    throw new RangeError('limits differ from the caps of the given store (pass a store factory instead)');
  }
  return input.store;
}

/** A routed session's lifetime when its create asks none, and the most it may ask (as the relay's own). */
const ROUTED_DEFAULT_TTL_SECONDS = 3600;
const ROUTED_MAX_TTL_SECONDS = 86_400;
/** Frames of routed sessions one node has passed to other nodes and awaits answers for. */
const ROUTED_NODE_ASKS = 10_000;

/** Statuses from peers remembered by one process (the oldest are forgotten first). */
const RECENT_PEER_STATUSES = 100_000;

/** One process claims in its own memory: copies come from links that overlap, within moments. */
function claimLocally(): (key: string) => Promise<boolean> {
  const recent = new BoundedSet<string>(RECENT_PEER_STATUSES);
  return async (key) => {
    if (recent.has(key)) return false;
    recent.add(key);
    return true;
  };
}

/**
 * What federation takes from the stores and the coordination (DESIGN §3 "Cluster"): each peer's
 * outbox is sent by one node at a time (under the stores' sweep lock, when they have one), each
 * status a peer sends back is passed on once for the relay (the coordination's single-use cache),
 * and a `queued` status reaches a sender live on another node.
 */
function clusterFederation(
  stores: RelayStores,
  coordination: Coordination,
  cluster: boolean,
): Pick<FederationDeps, 'lease' | 'claim' | 'onlineElsewhere'> {
  const lock = stores.withSweepLock;
  return {
    ...(lock ? { lease: (name: string, pass: () => Promise<void>) => lock.call(stores, name, pass) } : {}),
    claim: cluster ? (key, expiresAt) => coordination.statusClaims.useOnce(key, expiresAt) : claimLocally(),
    onlineElsewhere: async (identity) => {
      if (!cluster) return false;
      const nodes = await coordination.presence.nodesOf(identity).catch(() => [] as readonly string[]);
      return nodes.some((n) => n !== coordination.nodeId);
    },
  };
}

/**
 * Builds the relay's engine: a `WmpServer` on the relay's stores with the relay hooks and
 * methods, rate limits per identity, connection and source, the shared memory budgets, and the
 * expiry sweeper (not started).
 */
export function createRelayCore(input: RelayConfig): RelayCore {
  const config = resolveConfig(input);
  const { limits, timings } = config;
  const now = input.now ?? Date.now;
  const logger = input.logger ?? silentLogger;
  const identity = relayKeypair(input.identity);
  const stores = openStores(input, relayStoreLimits(input));
  const metrics = new RelayMetrics();
  const refusals = new RefusalLog(logger, timings.refusalLogIntervalMs, now);
  const budgets: RelayBudgets = {
    outbound: new ByteBudget(limits.outboundBufferBytes),
    replay: new ByteBudget(limits.replayBufferChars),
    bodies: new ByteBudget(limits.bodyBytesInFlight),
  };
  // A given coordination makes this a node of a cluster; else one process, on its own.
  const coordination = input.coordination ?? memoryCoordination({ nodeId: input.nodeId ?? 'local', now });
  // A full session store is refused by the store itself; the relay logs it once per interval.
  const sessions = notingFullStore(stores.sessions, refusals);
  const presence = new Presence(limits.maxConnectionsPerIdentity);
  const forwarder = new Forwarder(stores.queue, presence, metrics, logger, now);
  const wakeUps = new QueueWakeUps(coordination, presence, forwarder, logger, {
    safetyPollMs: timings.safetyPollMs,
    // One process loses no wake-up: no need to read every queue again and again.
    poll: input.coordination !== undefined,
  });
  presence.onidentityup = (id) => wakeUps.identityUp(id);
  presence.onidentitydown = (id) => wakeUps.identityDown(id);
  forwarder.oncommitted = (id, seq) => wakeUps.committed(id, seq);
  forwarder.watching = (id) => wakeUps.ready(id);
  const statuses = new StatusNotifier(
    presence,
    stores.queue,
    forwarder,
    { relayId: identity.did, ttlMs: timings.messageTtlSeconds * 1000, maxQueued: stores.queue.limits.maxQueued },
    metrics,
    logger,
    now,
  );
  if (input.coordination !== undefined) {
    // A status for a sender online on another node goes there, live (DESIGN §3 "Cluster").
    statuses.elsewhere = (sender, note) => wakeUps.note(sender, note);
    wakeUps.onnote = (identity, note) => {
      const ended = endedSessionOf(note);
      if (ended === undefined) return statuses.noted(identity, note);
      // Closed or logged out on another node: its connections here (HTTP sessions) end now.
      server.forget(ended);
      presence.dropSession(ended);
    };
  }
  // Written to a live connection for the first time: its sender hears `delivered` now (DESIGN §3).
  forwarder.ondelivered = (marked) => statuses.terminal(marked, 'delivered');
  // An HTTP session opened its event stream: what waited for it goes out now.
  presence.onreachable = (endpoint) => void forwarder.pump(endpoint);
  // Loopback is a local proxy unless the operator says otherwise: its clients are not one source.
  const sourceOf = (address: string | undefined): string | undefined =>
    input.limitLoopback === true || address === undefined ? address : isLoopbackAddress(address) ? undefined : address;
  const limiters = relayLimiters(limits, coordination, now, sourceOf);

  let origin = input.publicUrl?.replace(/\/+$/, '') ?? 'http://localhost';
  const federation =
    input.federation === undefined || input.federation.mode === 'off'
      ? undefined
      : new Federation({
          config: input.federation,
          identity,
          origin: () => origin,
          queue: stores.queue,
          outbox: {
            maxQueued: limits.maxOutboxMessages,
            maxBytes: limits.maxOutboxBytes,
            maxQueuedPerSender: limits.maxOutboxMessagesPerSender,
            maxBytesPerSender: limits.maxOutboxBytesPerSender,
          },
          statuses,
          presence,
          card: (key) => stores.box.getCard(key, now()),
          logger,
          now,
          ...clusterFederation(stores, coordination, input.coordination !== undefined),
        });
  if (federation !== undefined) {
    statuses.onremote = (sender, params) => federation.statusToPeer(sender, params);
    statuses.onhome = (sender, params) => federation.statusToHome(sender, params);
  }
  const hop = (): RelayHop => ({ relay: `${origin}/wmp`, relayId: identity.did, signer: identity });
  const authenticators =
    typeof input.authenticators === 'function'
      ? input.authenticators({ replays: coordination.replays, endpoints: () => endpointUrls(origin) })
      : input.authenticators;
  let server!: WmpServer;
  const services: RelayServices = {
    config,
    queue: stores.queue,
    queueLimits: stores.queue.limits,
    sessions,
    keyPackages: stores.keyPackages,
    keyPackageBudget: coordination.keyPackageBudgets({ perTarget: limits.keyPackageFetchesPerTarget, now }),
    groups: stores.groups,
    presence,
    forwarder,
    statuses,
    federation,
    connections: { connectionsOf: (id: string) => server.connectionsOf(id) },
    limiters,
    refusals,
    metrics,
    logger,
    hop,
    now,
  };

  const routeOffers = coordination.rateLimiter('route-offers', {
    perSecond: limits.routeOffersPerSecond,
    burst: limits.routeOfferBurst,
    now,
  });
  const localLinks = localPartyLinks({
    connectionsOf: (id) => server.connectionsOf(id),
    newestRegistered: (id) => {
      const e = presence.newestRegistered(id, now());
      return e?.hopSession === undefined ? undefined : { connection: e.connection, hop: e.hopSession };
    },
  });
  // A cluster node passes frames for parties on other nodes through the coordination.
  const clusterLinks =
    input.coordination === undefined
      ? undefined
      : new ClusterPartyLinks({ coordination, local: localLinks, maxWaiting: ROUTED_NODE_ASKS, logger });
  const routes = new RoutedSessions({
    relayId: identity.did,
    sessions,
    links: clusterLinks === undefined ? localLinks : chainLinks(localLinks, clusterLinks),
    limits: {
      maxForwardedPerConnection: limits.maxForwardedPerConnection,
      maxForwardedPerRoute: limits.maxForwardedPerRoute,
      maxRoutesPerIdentity: limits.maxRoutesPerIdentity,
      offerTimeoutMs: timings.routeOfferTimeoutMs,
      requestTimeoutMs: timings.routedRequestTimeoutMs,
      defaultTtlSeconds: ROUTED_DEFAULT_TTL_SECONDS,
      maxTtlSeconds: ROUTED_MAX_TTL_SECONDS,
    },
    admitOffer: async (id) => routeOffers.take(id),
    hopOf: (connection, id) =>
      presence.get(id, connection)?.hopSession ??
      [...connection.sessions].find(([, binding]) => binding.identity === id)?.[0],
    offered: (params) => withRelayEntry('wmp.session.create', params, hop()),
    deliver: (request, session, sender, to, ctx) => deliverOnRoute(services, request, session, sender, to, ctx),
    ack: async (identity, params) => {
      const { message_ids } = coreMethods.validateParams('wmp.message.ack', params) as ParamsOf<'wmp.message.ack'>;
      statuses.terminal(await stores.queue.ack(identity, message_ids), 'delivered');
    },
    refusals,
    logger,
    now,
  });

  const hooks = relayHooks(services);
  const storeRefusal = storeRefusalOf(refusals);
  server = new WmpServer({
    store: sessions,
    routes,
    capabilities: {
      messaging: { max_size: limits.maxMessageBytes },
      relay: { destinations: ['*'] },
      offline: {
        max_queued: stores.queue.limits.maxQueued,
        ttl: timings.messageTtlSeconds,
        status_notifications: true,
      },
    },
    // Delivering to others is the relay's service: `relay` need not be negotiated for it (docs/wmp-profile.md).
    grantedCapabilities: ['relay'],
    // A group's participants are its recipients: malformed ones are refused at create.
    participantProblem: identifierProblem,
    // signed_challenge is always on; configured types (bearer, say) come beside it.
    authenticators: { signed_challenge: signedChallengeAuthenticator(), ...authenticators },
    // Mutual authentication (core §4.4.5): a create with a nonce is answered signed as relay_id.
    identity: { id: identity.did, signer: identity },
    maxSessionsPerConnection: limits.maxSessionsPerConnection,
    maxConnections: limits.maxConnections,
    maxUnauthenticatedConnections: limits.maxUnauthenticatedConnections,
    unauthenticatedTimeoutMs: timings.unauthenticatedTimeoutMs,
    pendingTtlSeconds: timings.pendingSessionTtlSeconds,
    maxMessageBytes: limits.maxMessageBytes,
    // Before anything is stored for a stranger: per connection and per source address.
    admitSessionless: (_method, ctx) => limiters.admitOpen(ctx.connection, refusals),
    // Throwing here answers -31007 (rate windows stay in memory); `true` lets the call on.
    authorize: async (ctx) => {
      // A configured peer carries all its users' traffic: its own, larger budget.
      if (federation?.isKnownPeer(ctx.sender)) federation.chargePeerRequest(ctx.sender as string);
      else await limiters.chargeRequests(ctx.sender, ctx.connection, refusals);
      return true;
    },
    hooks: {
      ...hooks,
      deliver: deliverHook(services),
      sessionEnded(session) {
        hooks.sessionEnded?.(session);
        if (input.coordination === undefined) return;
        for (const identity of identitiesOf(session)) void wakeUps.note(identity, sessionEndedNote(session.id));
      },
    },
    // The database down is a retryable -31007, not a bare -32603.
    refusalOf: storeRefusal,
    // A peer relay forwards its users' messages: the deliver hook binds their senders (inbound.ts).
    ...(federation ? { forwardsFor: (id: string, method: string) => federation.forwardsFor(id, method) } : {}),
    now,
  });
  registerRelayMethods(server, services);

  const sweeper = new Sweeper(stores, statuses, timings, logger, now);
  let connections = 0;
  // One observer for every connection (the transport reports its end once): no closures per socket.
  const observer: TransportObserver = {
    error: (code) => metrics.error(code),
    closed: () => {
      connections--;
    },
  };
  return {
    get origin() {
      return origin;
    },
    set origin(value: string) {
      origin = value;
    },
    config,
    identity,
    stores,
    server,
    services,
    metrics,
    sweeper,
    coordination,
    wakeUps,
    federation,
    start() {
      sweeper.start();
      wakeUps.start();
      federation?.start();
      void clusterLinks?.start();
    },
    async stop() {
      clusterLinks?.stop();
      await federation?.stop();
      wakeUps.stop();
      await sweeper.stop();
      if (input.coordination === undefined) await coordination.close();
    },
    logger,
    budgets,
    refusals,
    get connections() {
      return connections;
    },
    async connect(transport: Transport, context?: { readonly adopt?: string }): Promise<Connection> {
      connections++;
      const observed = new ObservedTransport(transport, observer);
      let connection: Connection;
      try {
        connection = await server.connect(observed);
      } catch (e) {
        // A refused connection is closed before it started and may never report it: ended once here.
        observed.end();
        const reason = (e as { data?: { reason?: string } }).data?.reason;
        refusals.note(reason === 'too many unauthenticated connections' ? 'unauthenticated_slots' : 'connection_slots');
        throw e;
      }
      if (context?.adopt === undefined) return connection;
      try {
        await server.adopt(connection, context.adopt);
      } catch (e) {
        await connection.peer.close().catch(() => undefined);
        // The store down is "not now" (-31007), which the binding must not answer as a lost session.
        throw storeRefusal(e) ?? e;
      }
      return connection;
    },
    endSession: (connection, sessionId) => server.endSession(connection, sessionId),
    sourceOf,
    async sessionLive(sessionId) {
      const session = await sessions.get(sessionId);
      return session !== undefined && session.state !== 'closed' && !isExpired(session, now());
    },
  };
}
