import type { Capabilities, Security } from '@wmp/jsonrpc-envelope';

export type SessionState = 'pending' | 'active' | 'closed';

/** Most participants of one session, the initiator included. */
export const MAX_PARTICIPANTS = 256;

/**
 * How long an unauthenticated session lives (docs/architecture.md, "Bounds"): it gets its full
 * lifetime on authentication.
 */
export const DEFAULT_PENDING_TTL_SECONDS = 60;

/** One outstanding challenge: single use, time bounded (core §4.4.7). */
export interface ChallengeRecord {
  readonly value: string;
  readonly expiresAt: number;
}

/** How one identity authenticated on a session. */
export interface AuthenticatedWith {
  /** The `auth.type` it used (`signed_challenge`, `x5c`, `mtls`, ...). */
  readonly type: string;
  /** The level its authenticator vouched for (`low`, `substantial`, `high`), when it says. */
  readonly assurance?: string;
}

/** A resumption token as kept: its SHA-256 (b64url) and the identity it resumes. */
export interface TokenRecord {
  readonly hash: string;
  readonly identity: string | undefined;
}

/**
 * What a responder keeps about a session. Plain, immutable data, so any store can persist it and
 * hand out the same object to every reader: a change is a new record made by a pure function
 * (`session-changes.ts`) inside one atomic `SessionStore.update`.
 */
export interface SessionRecord {
  readonly id: string;
  readonly version: string;
  /** The identity the initiator claimed (`wmp.sender` of create). */
  readonly initiator: string | undefined;
  /** Everyone who may take part: the initiator and the listed participants. */
  readonly participants: readonly string[];
  readonly capabilities: Capabilities;
  readonly security: Security;
  readonly state: SessionState;
  /** Identities that authenticated on this session. */
  readonly authenticated: readonly string[];
  readonly challenge: ChallengeRecord | undefined;
  /**
   * The session's challenge as issued at create, kept for the session's life: the nonce every
   * identity assertion on the session must carry (core §5.6), after the challenge itself was used.
   */
  readonly assertionNonce?: string;
  /**
   * Each current resumption token (its hash, never the token) with the identity it resumes: one
   * per identity, single use, rotated on resume.
   */
  readonly resumptionTokens: readonly TokenRecord[];
  /**
   * How each identity authenticated (its `auth.type`, and the assurance level its authenticator
   * vouched for, if any): what a relay judges a recipient's assurance by (core §3.5.1).
   */
  readonly authenticatedWith?: Readonly<Record<string, AuthenticatedWith>>;
  readonly createdAt: number;
  /** The negotiated lifetime: an unauthenticated session lives shorter until it authenticates. */
  readonly ttlSeconds?: number;
  readonly expiresAt: number;
}

export function isExpired(session: SessionRecord, now: number): boolean {
  return now >= session.expiresAt;
}

/** An unauthenticated session, which counts against the store's smaller pending cap. */
export function isPending(session: SessionRecord): boolean {
  return session.state === 'pending';
}
