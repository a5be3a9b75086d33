import type { Keypair, RelayHop } from '@wmp/jcs-signing';
import { coreMethods, isLoopbackAddress, type ParamsOf } from '@wmp/jsonrpc-envelope';
import {
  type Connection,
  identifierProblem,
  isExpired,
  signedChallengeAuthenticator,
  type Transport,
  WmpServer,
} from '@wmp/session';
import { ByteBudget, SourceReadRate } from '@wmp/transports';
import type { Coordination } from '../coordination/contracts/coordination.js';
import { memoryCoordination } from '../coordination/memory/coordination.js';
import type { RelayStores } from '../storage/contracts/relay-stores.js';
import { type RelayConfig, registeredConfigOf, relayStoreLimits } from './config.js';
import { type ResolvedEvidenceConfig, resolveEvidenceConfig } from './evidence/evidence-config.js';
import { evidenceCapability } from './evidence/evidence-policy.js';
import { evidenceRoom } from './evidence/evidence-room.js';
import type { EvidenceRecorder } from './evidence/evidence-witness.js';
import { evidenceHooksOf } from './evidence/witnessed-events.js';
import { clusterFederation } from './federation/cluster-federation.js';
import { Federation } from './federation/federation.js';
import { knownPeerOn } from './federation/peer-connections.js';
import { wellKnownConfiguration } from './http/well-known.js';
import { openStores } from './open-stores.js';
import { Presence } from './presence/presence.js';
import { Forwarder } from './routing/forwarder.js';
import type { HandoverDeps } from './routing/handover.js';
import { isReservedKey } from './routing/held-keys.js';
import { QueueWakeUps } from './routing/queue-wake-ups.js';
import { Router } from './routing/route.js';
import { DueScheduler } from './routing/scheduler.js';
import { endpointUrls } from './sessions/auth-context.js';
import { relayDelegation } from './sessions/delegations.js';
import { type DeliverDeps, deliverHook, deliverOnRoute } from './sessions/deliver.js';
import { acknowledged, relayHooks } from './sessions/hooks.js';
import { registerRelayMethods } from './sessions/relay-methods.js';
import { relayResolvers } from './sessions/relay-resolvers.js';
import { relayRoutes } from './sessions/routed/relay-routes.js';
import { CachedSessionStore } from './sessions/session-cache.js';
import { endedSessionOf, identitiesOf, sessionEndedNote } from './sessions/session-ended-notes.js';
import { failHandover } from './statuses/failed-handovers.js';
import { StatusNotifier } from './statuses/statuses.js';
import { Sweeper } from './statuses/sweeper.js';
import type { RelayBudgets } from './support/budgets.js';
import { relayKeypair } from './support/identity.js';
import { type ResolvedConfig, resolveConfig } from './support/limits.js';
import { type Logger, silentLogger } from './support/logger.js';
import { RelayMetrics } from './support/metrics.js';
import { notingFullStore } from './support/noted-session-store.js';
import { ObservedTransport, type TransportObserver } from './support/observed-transport.js';
import { OpsLog } from './support/ops-events.js';
import { RefusalLog } from './support/refusals.js';
import {
  erdsDocument,
  type ResolvedRegistered,
  recipientMetadataDocument,
  resolveRegistered,
} from './support/registered.js';
import type { RelayEvents } from './support/relay-events.js';
import { relayLimiters } from './support/relay-limiters.js';
import { storeRefusalOf } from './support/store-refusal.js';

/** The relay without a network: the session engine with routing, queues and their bookkeeping. */
export interface RelayCore {
  readonly config: ResolvedConfig;
  readonly identity: Keypair;
  readonly stores: RelayStores;
  readonly server: WmpServer;
  /** Who is online on this node: identity -> endpoints (`size`: the registered gauge of /metrics). */
  readonly presence: Presence;
  readonly metrics: RelayMetrics;
  readonly sweeper: Sweeper;
  /** What this node shares with the other nodes of its cluster (its own, on one process). */
  readonly coordination: Coordination;
  /** Cross-node wake-ups of the queues of this node's endpoints. */
  readonly wakeUps: QueueWakeUps;
  /** A cluster node's copies of session records (undefined on one process: its store is its own). */
  readonly sessionCache: CachedSessionStore | undefined;
  readonly logger: Logger;
  /** Memory shared by every connection (outbound buffers, replay buffers, bodies being read). */
  readonly budgets: RelayBudgets;
  /** How fast each source address is read (its sockets wait, its HTTP requests get 429, beyond). */
  readonly readRate: SourceReadRate;
  /** The operator's log events (docs/operations.md, "Log events"). */
  readonly ops: OpsLog;
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
  /** Registered delivery as configured, with its defaults (core §3.3-§3.5). */
  readonly registered: ResolvedRegistered;
  /** The well-known `erds` object (core §7.5.1.1): what the relay serves, as it enforces it. */
  readonly erds: Record<string, unknown>;
  /** The well-known `recipient_metadata` object (core §7.5.1.2). */
  readonly recipientMetadata: Record<string, unknown>;
  /** Hands over scheduled messages as they fall due. */
  readonly scheduler: DueScheduler;
  /** The evidence profile as configured (`enabled`, retention, TSA). */
  readonly evidenceConfig: ResolvedEvidenceConfig;
  /**
   * Records what the relay witnesses for messages under evidence (wmp-tables §9): the
   * consignment and acceptance steps call it (`acceptance_confirmed`, `content_handover`, ...).
   */
  readonly evidence: EvidenceRecorder;
}

/**
 * Builds the relay's engine, room by room from the lowest (docs/architecture.md, "Relay"): the
 * support floor, the events the rooms raise and who hears them, presence, routing, statuses,
 * federation, MLS and the session engine with the relay's hooks and methods. Nothing runs until
 * `start()` (the sweeper, the wake-ups, the peer links).
 */
export function createRelayCore(input: RelayConfig): RelayCore {
  // support/: bounds, identity, stores, logs, metrics, memory budgets, rate limits.
  const config = resolveConfig(input);
  const { limits, timings } = config;
  const now = input.now ?? Date.now;
  const logger = input.logger ?? silentLogger;
  const identity = relayKeypair(input.identity);
  const stores = openStores(input, relayStoreLimits(input));
  const configuredRegistered = resolveRegistered(registeredConfigOf(input), limits.maxMessageBytes);
  const metrics = new RelayMetrics();
  const refusals = new RefusalLog(logger, timings.refusalLogIntervalMs, now);
  const ops = new OpsLog(logger);
  const budgets: RelayBudgets = {
    outbound: new ByteBudget(limits.outboundBufferBytes),
    replay: new ByteBudget(limits.replayBufferChars),
    bodies: new ByteBudget(limits.bodyBytesInFlight),
  };
  const readRate = new SourceReadRate({
    bytesPerSecond: limits.sourceReadBytesPerSecond,
    burstBytes: limits.sourceReadBurst,
    now,
  });
  // A given coordination makes this a node of a cluster; else one process, on its own.
  const cluster = input.coordination !== undefined;
  const coordination = input.coordination ?? memoryCoordination({ nodeId: input.nodeId ?? 'local', now });
  // A cluster node keeps copies of the session records it reads, dropped on every change anywhere.
  const sessionCache = cluster
    ? new CachedSessionStore(
        stores.sessions,
        coordination,
        {
          maxEntries: limits.sessionCacheEntries,
          maxChars: limits.sessionCacheChars,
          maxAgeMs: timings.sessionCacheMs,
        },
        now,
      )
    : undefined;
  // A full session store is refused by the store itself; the relay logs it once per interval.
  const sessions = notingFullStore(sessionCache ?? stores.sessions, refusals);
  // Loopback is a local proxy unless the operator says otherwise: its clients are not one source.
  const sourceOf = (address: string | undefined): string | undefined =>
    input.limitLoopback === true || address === undefined ? address : isLoopbackAddress(address) ? undefined : address;
  const limiters = relayLimiters(limits, coordination, now, sourceOf);
  const erds = erdsDocument(configuredRegistered, input.federation?.erds);
  const recipientMetadata = recipientMetadataDocument(configuredRegistered);
  let origin = input.publicUrl?.replace(/\/+$/, '') ?? 'http://localhost';
  // Signed only where a signature carries value (core §5.7, docs/wmp-profile.md "Relay chain"):
  // under evidence and before the message leaves for a peer, or every entry with `always`.
  const signEveryEntry = input.relayChainSignatures === 'always';
  const hop = (): RelayHop => ({
    relay: `${origin}/wmp`,
    relayId: identity.did,
    signer: identity,
    sign: signEveryEntry,
  });
  const evidenceConfig = resolveEvidenceConfig(input.evidence);

  // What a room tells the rooms above it, and who hears it: the whole flow of a message in one
  // place. The rooms are built below; none raises anything before the relay serves.
  const events: RelayEvents = {
    // presence -> the wake-ups: a cluster node watches the identities it has endpoints of.
    identityUp: (id) => wakeUps.identityUp(id),
    identityDown: (id) => wakeUps.identityDown(id),
    // presence -> the forwarder: an HTTP session opened its event stream, what waited goes out now.
    reachableAgain: (endpoint) => void forwarder.pump(endpoint),
    // the forwarder -> the wake-ups: a commit wakes the other nodes; a pump waits for the watch.
    committed: (id, seq, body) => wakeUps.committed(id, seq, body),
    watching: (id) => wakeUps.ready(id),
    // the forwarder -> statuses: written to a live connection for the first time, `delivered`
    // (docs/architecture.md, "Message statuses");
    // -> evidence: delivered, and its content handed over, for messages under evidence.
    delivered: (marked) => {
      statuses.terminal(marked, 'delivered');
      witness.queueEvent({ kind: 'written', entries: marked });
    },
    // the route -> statuses: `queued` (online nowhere) and `dropped` (a full queue, a reused id).
    status: (sender, params, keep) => statuses.send(sender, params, keep),
    // the forwarder -> statuses: a connection below the message's assurance level; its delivery fails.
    handoverRefused: (id, failed) =>
      void failHandover({ queue: stores.queue, statuses, evidence: registered.evidence, logger }, id, failed),
    // the route -> evidence: a message under evidence that a recipient's queue did not take.
    droppedUnderEvidence: (sender, messageId, recipient, reason) =>
      witness.dropped(sender, messageId, recipient, reason),
    // the sweeper -> evidence: messages under evidence that expired (undelivered, or unacknowledged).
    expired: (removed) => witness.queueEvent({ kind: 'expired', entries: removed }),
    // the wake-ups -> statuses, sessions: a note from another node.
    noted: (id, note) => {
      const ended = endedSessionOf(note);
      if (ended === undefined) return statuses.noted(id, note);
      // Closed or logged out on another node: its connections here (HTTP sessions) end now.
      server.forget(ended);
      presence.dropSession(ended);
    },
    // statuses -> federation: back to the peer a sender came through, or to its home relay.
    statusToPeer: (sender, params) => federation?.statusToPeer(sender, params) ?? false,
    statusToHome: async (sender, params) => (await federation?.statusToHome(sender, params)) ?? false,
    // statuses -> the wake-ups: a sender online on another node hears it there, live (docs/architecture.md,
    // "Message statuses").
    statusElsewhere: (sender, note) => (cluster ? wakeUps.note(sender, note) : undefined),
    // federation -> sessions: a frame of a session routed through a peer, sent over our link to it.
    routedOverLink: (origin, message) => routes.passOverLink(origin, message),
  };

  // presence/
  const presence = new Presence(limits.maxConnectionsPerIdentity, events);

  // routing/: the forwarder and the wake-ups (the router comes once federation is there).
  const forwarder = new Forwarder({
    queue: stores.queue,
    presence,
    events,
    metrics,
    ops,
    logger,
    now,
    markDelayMs: timings.deliveredMarkDelayMs,
  });
  const wakeUps = new QueueWakeUps({
    coordination,
    presence,
    forwarder,
    events,
    logger,
    safetyPollMs: timings.safetyPollMs,
    // One process loses no wake-up: no need to read every queue again and again.
    poll: cluster,
  });

  // statuses/
  const statuses = new StatusNotifier({
    presence,
    queue: stores.queue,
    forwarder,
    keeping: {
      relayId: identity.did,
      ttlMs: timings.messageTtlSeconds * 1000,
      maxQueued: stores.queue.limits.maxQueued,
    },
    events,
    metrics,
    logger,
    now,
  });
  // evidence/: the records of what the relay witnesses, their notifications, peers' records.
  const { witness, fromPeers } = evidenceRoom({
    store: stores.evidence,
    config: evidenceConfig,
    identity,
    origin: () => origin,
    queue: stores.queue,
    forwarder,
    ttlMs: timings.messageTtlSeconds * 1000,
    maxQueued: stores.queue.limits.maxQueued,
    metrics,
    refusals,
    logger,
    now,
  });
  // The consignment steps of registered delivery are recorded as evidence too.
  const registered: ResolvedRegistered = evidenceConfig.enabled
    ? { ...configuredRegistered, evidence: evidenceHooksOf(witness, configuredRegistered.evidence) }
    : configuredRegistered;
  const sweeper = new Sweeper(stores, statuses, events, timings, logger, now, registered.evidence);

  // federation/
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
          events,
          ops,
          logger,
          now,
          ...clusterFederation(stores, coordination, cluster),
          evidence: { witness, fromPeers },
        });

  // routing/: the router reaches recipients at home at a peer through federation (`RemoteHomes`);
  // those here get a message as its consignment asks (at once, when due, once they consent).
  const handover: HandoverDeps = { queue: stores.queue, registered, relayId: identity.did, now };
  const scheduler = new DueScheduler({
    queue: stores.queue,
    handover,
    forwarder,
    events,
    logger,
    intervalMs: timings.scheduleIntervalMs,
    leaseMs: timings.scheduleLeaseMs,
    now,
  });
  const delegation = relayDelegation(registered);
  const router = new Router({
    handover,
    limits,
    queue: stores.queue,
    forwarder,
    presence,
    connections: { connectionsOf: (id) => server.connectionsOf(id) },
    remote: federation,
    events,
    limiters,
    refusals,
    metrics,
    ops,
    logger,
    hop,
  });

  // mls/ and sessions/: the deliver hook (with the MLS epoch check), routed sessions, the engine's
  // hooks, the engine, and the relay's methods (MLS groups and key packages among them).
  const inbound =
    federation === undefined
      ? undefined
      : {
          federation,
          router,
          timings,
          refusals,
          hop,
          delegation,
          registered,
          evidence: evidenceConfig.enabled ? witness : undefined,
          now,
        };
  const deliver: DeliverDeps = {
    router,
    registered,
    groups: stores.groups,
    presence,
    inbound,
    limits,
    timings,
    refusals,
    evidence: evidenceConfig.enabled
      ? {
          witness,
          keyResolver: evidenceConfig.keyResolver,
          signatureChains: evidenceConfig.signatureChains,
        }
      : undefined,
    now,
  };
  const { routes, clusterLinks } = relayRoutes({
    relayId: identity.did,
    sessions,
    coordination,
    cluster,
    federation: federation === undefined || inbound === undefined ? undefined : { federation, inbound },
    presence,
    connectionsOf: (id) => server.connectionsOf(id),
    limits,
    timings,
    hop,
    deliver: (request, session, from, to, ctx) => deliverOnRoute(deliver, request, session, from, to, ctx),
    // What the relay stored and forwarded on a route is acknowledged to the relay.
    ack: async (identity, params) => {
      const { message_ids } = coreMethods.validateParams('wmp.message.ack', params) as ParamsOf<'wmp.message.ack'>;
      const removed = await stores.queue.ack(identity, message_ids);
      ops.event('message.acked', { count: removed.length });
      acknowledged({ statuses, evidence: witness, forwarder }, removed);
    },
    refusals,
    metrics,
    ops,
    logger,
    now,
  });

  const resolvers =
    input.resolve === undefined
      ? undefined
      : relayResolvers(input.resolve, {
          registered: (id) => presence.newestRegistered(id, now()) !== undefined,
          document: () =>
            wellKnownConfiguration({
              origin,
              identity,
              limits,
              timings,
              maxQueued: stores.queue.limits.maxQueued,
              acceptedSchemes: server.acceptedSchemes,
              erds,
              recipientMetadata,
            }),
          now,
        });
  const hooks = relayHooks({
    queue: stores.queue,
    presence,
    forwarder,
    statuses,
    evidence: witness,
    groups: stores.groups,
    limiters,
    refusals,
    metrics,
    logger,
    ops,
    relayId: identity.did,
    assurance: registered.assurance,
    now,
  });
  const authenticators =
    typeof input.authenticators === 'function'
      ? input.authenticators({ replays: coordination.replays, endpoints: () => endpointUrls(origin) })
      : input.authenticators;
  const storeRefusal = storeRefusalOf(refusals);
  const server: WmpServer = new WmpServer({
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
      ...(resolvers ? { resolve: { supported_types: Object.keys(resolvers) } } : {}),
      ...(evidenceConfig.enabled ? { evidence: evidenceCapability(evidenceConfig, () => origin) } : {}),
    },
    // Delivering to others is the relay's service: `relay` need not be negotiated for it (docs/wmp-profile.md).
    grantedCapabilities: ['relay'],
    // A group's participants are its recipients: malformed ones are refused at create.
    participantProblem: (id) => (isReservedKey(id) ? 'not an identifier' : identifierProblem(id)),
    // A delegate sends and receives for its principal with a `sender_delegate` that holds (core §3.3).
    delegation,
    ...(resolvers ? { resolvers } : {}),
    ...(input.identityAssertions ? { identityAssertions: input.identityAssertions } : {}),
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
    // A configured peer passes on its users' creates: its own, larger budget.
    admitSessionless: async (_method, ctx) => {
      const peer = federation === undefined ? undefined : knownPeerOn(federation, ctx.connection);
      if (peer !== undefined) federation!.chargePeerRequest(peer);
      else await limiters.admitOpen(ctx.connection, refusals);
    },
    // Throwing here answers -31007 (rate windows stay in memory); `true` lets the call on.
    authorize: async (ctx) => {
      // The keys of outboxes and held messages are nobody's: no one speaks as one.
      if (ctx.sender !== undefined && isReservedKey(ctx.sender)) return false;
      // A configured peer carries all its users' traffic: its own, larger budget.
      if (federation?.isKnownPeer(ctx.sender)) federation.chargePeerRequest(ctx.sender as string);
      else await limiters.chargeRequests(ctx.sender, ctx.connection, refusals);
      return true;
    },
    hooks: {
      ...hooks,
      deliver: deliverHook(deliver),
      sessionEnded(session) {
        hooks.sessionEnded?.(session);
        if (!cluster) return;
        for (const identity of identitiesOf(session)) void wakeUps.note(identity, sessionEndedNote(session.id));
      },
    },
    // The database down is a retryable -31007, not a bare -32603.
    refusalOf: storeRefusal,
    // A peer relay forwards its users' messages: the deliver hook binds their senders (inbound.ts).
    ...(federation ? { forwardsFor: (id: string, method: string) => federation.forwardsFor(id, method) } : {}),
    now,
  });
  registerRelayMethods(server, {
    sessions,
    presence,
    forwarder,
    queue: stores.queue,
    router,
    statuses,
    registered,
    assurance: registered.assurance,
    groups: stores.groups,
    keyPackages: stores.keyPackages,
    keyPackageBudget: coordination.keyPackageBudgets({ perTarget: limits.keyPackageFetchesPerTarget, now }),
    federation,
    acks: { statuses, evidence: witness, forwarder, queue: stores.queue },
    limits,
    timings,
    limiters,
    refusals,
    logger,
    now,
  });

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
    presence,
    metrics,
    sweeper,
    coordination,
    wakeUps,
    sessionCache,
    federation,
    registered,
    erds,
    recipientMetadata,
    scheduler,
    evidenceConfig,
    evidence: witness,
    start() {
      void sessionCache?.start();
      sweeper.start();
      scheduler.start();
      wakeUps.start();
      federation?.start();
      void clusterLinks?.start();
    },
    async stop() {
      sessionCache?.stop();
      clusterLinks?.stop();
      await federation?.stop();
      wakeUps.stop();
      await scheduler.stop();
      await sweeper.stop();
      // What was written to connections and not marked yet is marked before the store closes.
      await forwarder.flushMarks();
      if (!cluster) await coordination.close();
    },
    logger,
    budgets,
    readRate,
    ops,
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
