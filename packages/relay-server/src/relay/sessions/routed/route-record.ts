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
}

export type RelayRoutedRecord = RoutedSessionRecord & { readonly route: RelayRoute };

/** One party of a route, as reached from here. */
export interface Party {
  readonly id: string;
  readonly hop: string | undefined;
}

export function initiatorOf(route: RelayRoute): Party {
  return { id: route.initiator, hop: route.initiatorHop };
}

export function responderOf(route: RelayRoute): Party {
  return { id: route.responder, hop: route.responderHop };
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
