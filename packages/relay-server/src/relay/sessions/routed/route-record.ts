import type { RoutedSessionRecord, SessionRoute } from '@wmp/session';

/** A session id another party chose: end to end, since the signed challenge binds it. */
export const ROUTED_SESSION_ID = /^ses-[A-Za-z0-9_-]{16,128}$/;

/**
 * A routed session as the relay keeps it: who the two parties are and, for each, the hop session
 * whose connection carries it (the device that holds the session's state: frames go to the
 * connection bound to it, else to the party's newest registered connection).
 */
export interface RelayRoute extends SessionRoute {
  /** The initiator's hop session here, when it is connected here. */
  readonly initiatorHop?: string;
  /** The responder's hop session here that answered the create. */
  readonly responderHop?: string;
  /** The initiator is at another relay, which offered the create here over its link to us. */
  readonly initiatorVia?: PeerPath;
  /** The responder is at another relay, to which we offered the create over our link. */
  readonly responderVia?: PeerPath;
}

/**
 * How a party at another relay is reached (docs/architecture.md, "Sessions through the relay"):
 * that relay speaks for it on this route, and only for it. `link`: we offered the create over our
 * link to that origin, and frames go over that link; `peer`: that relay offered it here over its
 * link to us, and frames go back over that link (a connection here authenticated as its
 * relay_id). `origin` is where its outbox is (the route's deliveries go there), when known.
 */
export type PeerPath =
  | { readonly link: string; readonly relayId: string }
  | { readonly peer: string; readonly origin?: string };

/** The relay_id of the peer relay that speaks for a party reached over `via`. */
export function peerRelayOf(via: PeerPath): string {
  return 'link' in via ? via.relayId : via.peer;
}

/** The origin of the peer relay of `via`, where its outbox goes, when known. */
export function peerOriginOf(via: PeerPath): string | undefined {
  return 'link' in via ? via.link : via.origin;
}

export type RelayRoutedRecord = RoutedSessionRecord & { readonly route: RelayRoute };

/** One party of a route, as reached from here. */
export interface Party {
  readonly id: string;
  readonly hop: string | undefined;
  /** At another relay: reached only through it. */
  readonly via?: PeerPath;
}

export function initiatorOf(route: RelayRoute): Party {
  const { initiator: id, initiatorHop: hop, initiatorVia: via } = route;
  return via === undefined ? { id, hop } : { id, hop, via };
}

export function responderOf(route: RelayRoute): Party {
  const { responder: id, responderHop: hop, responderVia: via } = route;
  return via === undefined ? { id, hop } : { id, hop, via };
}

/**
 * The session id of a create's answer, when it is one: an object whose `wmp.session_id` is a
 * well-formed id. Anything else is no create result (the relay hosts the session instead).
 */
export function answeredSessionId(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return undefined;
  const id = (result as { wmp?: { session_id?: unknown } }).wmp?.session_id;
  return typeof id === 'string' && ROUTED_SESSION_ID.test(id) ? id : undefined;
}

/** The record of a route the responder accepted: it lives as long as the initiator asked, within the relay's bound. */
export function routedRecord(input: {
  readonly id: string;
  readonly version: string;
  readonly route: RelayRoute;
  readonly answer: Record<string, unknown>;
  readonly ttlSeconds: number;
  readonly now: number;
}): RelayRoutedRecord {
  const { id, version, route, answer, ttlSeconds, now } = input;
  const capabilities = answer.capabilities;
  const security = answer.security;
  return {
    id,
    version,
    initiator: route.initiator,
    participants: [route.initiator, route.responder],
    capabilities:
      typeof capabilities === 'object' && capabilities !== null
        ? (capabilities as RelayRoutedRecord['capabilities'])
        : {},
    security:
      typeof security === 'object' && security !== null ? (security as RelayRoutedRecord['security']) : { mode: 'tls' },
    state: 'active',
    // The relay authenticates nobody on a routed session: the responder does.
    authenticated: [],
    challenge: undefined,
    resumptionTokens: [],
    createdAt: now,
    ttlSeconds,
    expiresAt: now + ttlSeconds * 1000,
    route,
  };
}
