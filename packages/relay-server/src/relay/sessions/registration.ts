import { NotAuthorizedError, SessionNotFoundError } from '@wmp/jsonrpc-envelope';
import {
  type RequestHandler,
  type SessionChange,
  type SessionRecord,
  type SessionStore,
  UNKNOWN_SESSION,
  type WmpContext,
} from '@wmp/session';
import { wantsEvidence } from '../evidence/evidence-policy.js';
import type { Presence } from '../presence/presence.js';
import type { Forwarder } from '../routing/forwarder.js';
import { wantsStatuses } from '../statuses/statuses.js';
import { type AssuranceLevel, assuranceOf } from '../support/assurance.js';
import type { Endpoint } from '../support/endpoint.js';
import type { RelayTimings } from '../support/limits.js';
import { metaFor } from '../support/session-meta.js';
import { withDelegation } from './delegations.js';

/** What a registration changes: the session record, presence, and the endpoint's pump. */
export interface RegistrationDeps {
  readonly sessions: Pick<SessionStore, 'update'>;
  readonly presence: Pick<Presence, 'ensure' | 'setHop'>;
  readonly forwarder: Pick<Forwarder, 'pump'>;
  readonly timings: Pick<RelayTimings, 'registrationTtlSeconds'>;
  /** Auth type -> assurance level: what the registered connection's content is judged by. */
  readonly assurance: Readonly<Record<string, AssuranceLevel>>;
  now(): number;
}

/**
 * Registrations live on the session record (identity -> until, ms), so the session store
 * persists them with the session and a resume, on any connection and after a restart, keeps
 * them (docs/architecture.md, "Delivering a message"). Stores keep unknown record members as they
 * are.
 */
const FIELD = 'relay_registrations';

type WithRegistrations = SessionRecord & { [FIELD]?: Record<string, number> };

export function registrationsOf(session: SessionRecord): Readonly<Record<string, number>> {
  return (session as WithRegistrations)[FIELD] ?? {};
}

/** The change that records `identity`'s registration until `until` (one atomic session update). */
function withRegistration(identity: string, until: number): SessionChange {
  return (session) => ({ ...session, [FIELD]: { ...registrationsOf(session), [identity]: until } }) as SessionRecord;
}

/**
 * Binds `endpoint` to `session` until `until`: its content is judged by the assurance `acting`
 * (the identity itself, or its delegate) authenticated with.
 */
export function routeEndpoint(
  s: Pick<RegistrationDeps, 'presence' | 'assurance'>,
  endpoint: Endpoint,
  session: SessionRecord,
  acting: string,
  until: number,
): void {
  s.presence.setHop(endpoint, session.id, until, wantsStatuses(session), wantsEvidence(session));
  endpoint.assurance = assuranceOf(session, acting, s.assurance);
  endpoint.delegate = acting === endpoint.identity ? undefined : acting;
}

/**
 * `wmp.relay.register` (transport §6.5): binds the session's authenticated identity to this
 * connection (a delegate's principal, for a recipient-side delegate whose `retrieve` delegation
 * held: until it ends at most); each registered connection (device) of an identity gets every
 * message. Answers
 * `{registered: true, ttl}`; the TTL is the configured one, bounded by the session's expiry.
 */
export function registerHandler(s: RegistrationDeps): RequestHandler<WmpContext> {
  return async (_raw, ctx) => {
    const session = ctx.session as SessionRecord;
    const authenticated = ctx.sender;
    if (authenticated === undefined || !session.authenticated.includes(authenticated)) {
      throw new NotAuthorizedError({ reason: 'authenticate before registering' });
    }
    // A recipient-side delegate (core §3.3) registers for its principal: it gets the principal's messages.
    const delegation = ctx.delegation;
    const identity = delegation?.principal ?? authenticated;
    const now = s.now();
    const ttl = Math.max(1, Math.min(s.timings.registrationTtlSeconds, Math.floor((session.expiresAt - now) / 1000)));
    const until = Math.min(now + ttl * 1000, delegation?.validUntil ?? Number.POSITIVE_INFINITY);
    const endpoint = s.presence.ensure(identity, ctx.connection, 0); // -31007 past the per-identity cap
    if (endpoint === undefined) throw new NotAuthorizedError({ reason: 'connection closed' });
    // A register asks for everything unacknowledged again (as a resume without last_received_id).
    endpoint.cursor = 0;
    const change = withRegistration(identity, until);
    const recorded = delegation
      ? (r: SessionRecord) => withDelegation(identity, authenticated, until)(change(r))
      : change;
    if ((await s.sessions.update(session.id, recorded)) === undefined) {
      throw new SessionNotFoundError(UNKNOWN_SESSION);
    }
    routeEndpoint(s, endpoint, session, authenticated, until);
    // After the answer: what waits in the queue follows the registration, in order.
    setTimeout(() => void s.forwarder.pump(endpoint), 0);
    return { wmp: metaFor(session.id, session.version), registered: true, ttl };
  };
}
