import type { RelayHop } from '@wmp/jcs-signing';
import type { SessionStore } from '@wmp/session';
import type { Coordination } from '../../../coordination/contracts/coordination.js';
import type { Federation } from '../../federation/federation.js';
import { acceptForwardedCreate, type InboundDeps } from '../../federation/inbound.js';
import { peerOn } from '../../federation/peer-connections.js';
import type { Presence } from '../../presence/presence.js';
import type { RelayLimits, RelayTimings } from '../../support/limits.js';
import type { Logger } from '../../support/logger.js';
import type { RefusalLog } from '../../support/refusals.js';
import { ClusterPartyLinks, chainLinks } from './cluster-links.js';
import { withRelayEntry } from './offered.js';
import { type LocalConnections, localPartyLinks } from './party-links.js';
import { peerPartyLinks } from './peer-links.js';
import { type RoutedDeps, RoutedSessions } from './routed-sessions.js';

/** A routed session's lifetime when its create asks none, and the most it may ask (as the relay's own). */
const ROUTED_DEFAULT_TTL_SECONDS = 3600;
const ROUTED_MAX_TTL_SECONDS = 86_400;
/** Frames of routed sessions one node has passed to other nodes and awaits answers for. */
const ROUTED_NODE_ASKS = 10_000;

/**
 * What the relay's routed sessions take: the parties' connections here and, in a cluster, on other
 * nodes; with federation, the peer relays' links.
 */
export interface RelayRoutesDeps extends Pick<RoutedDeps, 'relayId' | 'deliver' | 'ack' | 'metrics' | 'ops'> {
  readonly sessions: SessionStore;
  readonly coordination: Coordination;
  /** A node of a cluster: frames for parties on other nodes pass through the coordination. */
  readonly cluster: boolean;
  /** Federation, when on: parties at home at peer relays, and the creates peers pass on (bound as their forwards). */
  readonly federation: { readonly federation: Federation; readonly inbound: InboundDeps } | undefined;
  readonly presence: Pick<Presence, 'get' | 'newestRegistered'>;
  /** Connections bound to a session here (the session engine's bindings). */
  readonly connectionsOf: LocalConnections['connectionsOf'];
  readonly limits: Pick<
    RelayLimits,
    | 'maxForwardedPerConnection'
    | 'maxForwardedPerRoute'
    | 'maxForwardedPerPeer'
    | 'maxRoutesPerIdentity'
    | 'maxRoutesPerPeer'
    | 'routeOffersPerSecond'
    | 'routeOfferBurst'
  >;
  readonly timings: Pick<RelayTimings, 'routeOfferTimeoutMs' | 'routedRequestTimeoutMs'>;
  /** This relay as a hop of relay_chain (an offered create carries its entry). */
  hop(): RelayHop;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/**
 * Sessions routed end to end through the relay, with the links that reach their parties: on this
 * node, then (a cluster node) on the others, then (federation) at peer relays. `clusterLinks`
 * starts and stops with the relay.
 */
export function relayRoutes(d: RelayRoutesDeps): {
  readonly routes: RoutedSessions;
  readonly clusterLinks: ClusterPartyLinks | undefined;
} {
  const { coordination, limits, presence, now } = d;
  const routeOffers = coordination.rateLimiter('route-offers', {
    perSecond: limits.routeOffersPerSecond,
    burst: limits.routeOfferBurst,
    now,
  });
  const localLinks = localPartyLinks({
    connectionsOf: d.connectionsOf,
    newestRegistered: (id) => {
      const e = presence.newestRegistered(id, now());
      return e?.hopSession === undefined ? undefined : { connection: e.connection, hop: e.hopSession };
    },
  });
  const clusterLinks = d.cluster
    ? new ClusterPartyLinks({ coordination, local: localLinks, maxWaiting: ROUTED_NODE_ASKS, logger: d.logger })
    : undefined;
  const homeLinks = clusterLinks === undefined ? localLinks : chainLinks(localLinks, clusterLinks);
  const fed = d.federation;
  const routes = new RoutedSessions({
    relayId: d.relayId,
    sessions: d.sessions,
    links: fed === undefined ? homeLinks : chainLinks(homeLinks, peerPartyLinks(fed.federation)),
    homeLinks,
    peers:
      fed === undefined
        ? undefined
        : {
            peerOn: (connection) => peerOn(fed.federation, connection),
            accept: (params, peerId) => acceptForwardedCreate(fed.inbound, params, peerId),
          },
    limits: {
      maxForwardedPerConnection: limits.maxForwardedPerConnection,
      maxForwardedPerRoute: limits.maxForwardedPerRoute,
      maxForwardedPerPeer: limits.maxForwardedPerPeer,
      maxRoutesPerIdentity: limits.maxRoutesPerIdentity,
      maxRoutesPerPeer: limits.maxRoutesPerPeer,
      offerTimeoutMs: d.timings.routeOfferTimeoutMs,
      requestTimeoutMs: d.timings.routedRequestTimeoutMs,
      defaultTtlSeconds: ROUTED_DEFAULT_TTL_SECONDS,
      maxTtlSeconds: ROUTED_MAX_TTL_SECONDS,
    },
    admitOffer: async (id) => routeOffers.take(id),
    hopOf: (connection, id) =>
      presence.get(id, connection)?.hopSession ??
      [...connection.sessions].find(([, binding]) => binding.identity === id)?.[0],
    // Signed whatever the setting: a create may go on to a peer relay, which verifies every entry.
    offered: (params) => withRelayEntry('wmp.session.create', params, { ...d.hop(), sign: true }),
    deliver: d.deliver,
    ack: d.ack,
    refusals: d.refusals,
    metrics: d.metrics,
    ops: d.ops,
    logger: d.logger,
    now,
  });
  return { routes, clusterLinks };
}
