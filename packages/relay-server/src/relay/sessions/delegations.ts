// Delegation at the relay (core §3.3): the verifier the engine runs on `wmp.sender_delegate`, and
// recipient-side delegates, registered like their principal on a session of their own.
import {
  type DelegationVerifier,
  delegationVerifier,
  type SessionChange,
  type SessionRecord,
  type WmpContext,
} from '@wmp/session';
import type { ResolvedRegistered } from '../support/registered.js';

/** What the engine does with `sender_delegate` (`WmpServerOptions.delegation`): verify it, or refuse it when off. */
export function relayDelegation(registered: ResolvedRegistered): DelegationVerifier | false {
  if (!registered.delegation) return false;
  return delegationVerifier({
    ...(registered.signatureChains ? { x5c: registered.signatureChains } : {}),
    ...(registered.delegationCredentials ? { presentations: registered.delegationCredentials } : {}),
  });
}

/** Who a message acts for: the principal a verified delegation names, else the authenticated sender. */
export function actingFor(ctx: WmpContext): string | undefined {
  return ctx.delegation?.principal ?? ctx.sender;
}

/** A delegate's registration for its principal, on the delegate's session record. */
export interface DelegatedRegistration {
  readonly delegate: string;
  /** ms; no later than the delegation's own end. */
  readonly until: number;
}

/** Kept on the session record beside the registrations (stores keep unknown record members). */
const FIELD = 'relay_delegations';

type WithDelegations = SessionRecord & { [FIELD]?: Record<string, DelegatedRegistration> };

/** Principal -> the delegate registered for it on this session. */
export function delegationsOf(session: SessionRecord): Readonly<Record<string, DelegatedRegistration>> {
  return (session as WithDelegations)[FIELD] ?? {};
}

/** The change that records `delegate`'s registration for `principal` until `until`. */
export function withDelegation(principal: string, delegate: string, until: number): SessionChange {
  return (session) =>
    ({ ...session, [FIELD]: { ...delegationsOf(session), [principal]: { delegate, until } } }) as SessionRecord;
}

/** The principals `delegate` is registered for on `session` at `now`. */
export function principalsOf(session: SessionRecord, delegate: string, now: number): string[] {
  return Object.entries(delegationsOf(session))
    .filter(([, d]) => d.delegate === delegate && d.until > now)
    .map(([principal]) => principal);
}

/**
 * The recipients whose queues a message on `ctx` may reach: the one it acts for, and the
 * principals its delegate registered for on this session (their acknowledgements and consents
 * are the delegate's to give).
 */
export function recipientsActedFor(ctx: WmpContext, now: number): string[] {
  const acting = actingFor(ctx);
  if (acting === undefined || ctx.sender === undefined || ctx.session === undefined) return [];
  return [...new Set([acting, ...principalsOf(ctx.session, ctx.sender, now)])];
}
