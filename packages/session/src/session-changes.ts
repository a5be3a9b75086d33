import { NotAuthorizedError, SessionExpiredError, SessionNotFoundError } from '@wmp/jsonrpc-envelope';
import { SESSION_EXPIRED, UNKNOWN_SESSION } from './refusal-reasons.js';
import type { AuthenticatedWith, ChallengeRecord, SessionRecord } from './session-model.js';
import type { SessionChange } from './session-store.js';
import { findToken, withNewToken } from './tokens.js';

/**
 * The read-modify-writes of a session, as pure changes for `SessionStore.update` (each runs
 * atomically with its write). A change that throws writes nothing. What a change hands back
 * besides the record (a taken challenge, a new token) it gives through its `result()`.
 */
export interface SessionChangeWith<T> {
  readonly change: SessionChange;
  /** What the change produced; valid once `update` resolved. */
  result(): T;
}

function live(session: SessionRecord, now: number): void {
  if (session.state === 'closed') throw new SessionNotFoundError(UNKNOWN_SESSION);
  if (now >= session.expiresAt) throw new SessionExpiredError(SESSION_EXPIRED);
}

/**
 * Takes the session's challenge: it answers one attempt, right or wrong (core §4.4.7), so it is
 * gone before the signature is checked. `result()` is the challenge if it was unexpired.
 */
export function takeChallenge(now: number): SessionChangeWith<ChallengeRecord | undefined> {
  let taken: ChallengeRecord | undefined;
  return {
    change: (session) => {
      taken = session.challenge !== undefined && session.challenge.expiresAt > now ? session.challenge : undefined;
      return session.challenge === undefined ? session : { ...session, challenge: undefined };
    },
    result: () => taken,
  };
}

/**
 * `identity` authenticated: it joins `authenticated`, the session becomes active with its full
 * lifetime, and the token issued at create (for no identity yet) now resumes this identity.
 */
export function authenticated(identity: string, now: number, how?: AuthenticatedWith): SessionChange {
  return (session) => {
    live(session, now);
    if (session.participants.length > 0 && !session.participants.includes(identity)) {
      throw new NotAuthorizedError({ reason: 'not a participant of this session' });
    }
    const lifetime =
      session.ttlSeconds === undefined ? session.expiresAt : session.createdAt + session.ttlSeconds * 1000;
    return {
      ...session,
      state: 'active',
      authenticated: session.authenticated.includes(identity)
        ? session.authenticated
        : [...session.authenticated, identity],
      resumptionTokens: session.resumptionTokens.map((t) => (t.identity === undefined ? { ...t, identity } : t)),
      expiresAt: Math.max(session.expiresAt, lifetime),
      ...(how ? { authenticatedWith: { ...session.authenticatedWith, [identity]: how } } : {}),
    };
  };
}

/**
 * A resume with `token` (core §4.5): the token must be a current one of the session, of `sender`
 * when the message names one; it is used up and a new one issued for the same identity.
 * Otherwise -31000 (never -31002, which would tell a thief the session exists); expired -31001.
 * `result()` is the new token and the identity it resumes.
 */
export function resumeWith(
  token: string,
  sender: string | undefined,
  now: number,
): SessionChangeWith<{ token: string; identity: string | undefined }> {
  let issued: { token: string; identity: string | undefined } | undefined;
  return {
    change: (session) => {
      live(session, now);
      const entry = findToken(session, token);
      if (entry === undefined) throw new SessionNotFoundError(UNKNOWN_SESSION);
      if (sender !== undefined && entry.identity !== undefined && sender !== entry.identity) {
        throw new SessionNotFoundError(UNKNOWN_SESSION);
      }
      const next = withNewToken(
        { ...session, resumptionTokens: session.resumptionTokens.filter((t) => t !== entry) },
        entry.identity,
      );
      issued = { token: next.token, identity: entry.identity };
      return { ...session, resumptionTokens: next.tokens };
    },
    result: () => issued!,
  };
}

/**
 * A listed participant enters a group session (`wmp.session.join`): it counts as authenticated
 * when it proved its identity on this connection, and gets its own resumption token.
 */
export function joined(identity: string, proven: boolean, now: number): SessionChangeWith<string> {
  let token: string | undefined;
  return {
    change: (session) => {
      live(session, now);
      if (!session.participants.includes(identity)) {
        throw new NotAuthorizedError({ reason: 'not a participant of this session' });
      }
      const next = withNewToken(session, identity);
      token = next.token;
      const add = proven && !session.authenticated.includes(identity);
      return {
        ...session,
        authenticated: add ? [...session.authenticated, identity] : session.authenticated,
        resumptionTokens: next.tokens,
      };
    },
    result: () => token!,
  };
}

/** A new resumption token for `identity` on an existing session (issued at create). */
export function issueToken(
  session: SessionRecord,
  identity: string | undefined,
): { session: SessionRecord; token: string } {
  const next = withNewToken(session, identity);
  return { session: { ...session, resumptionTokens: next.tokens }, token: next.token };
}
