import type { Auth } from '@wmp/jsonrpc-envelope';
import type { AuthenticatedWith, ChallengeRecord } from '../session-model.js';

/** What an authenticator sees of one authentication attempt. */
export interface AuthAttempt {
  readonly auth: Auth;
  readonly sessionId: string;
  /** The identity the message claims (`wmp.sender`). */
  readonly sender: string | undefined;
  /** The session's outstanding challenge (already checked for expiry), if any. */
  readonly challenge: ChallengeRecord | undefined;
  /** `wmp.timestamp` of the message, if any. */
  readonly timestamp: string | undefined;
  readonly now: number;
  /** The TLS client certificate chain of the connection (DER, leaf first), when the binding has one (`mtls`). */
  readonly peerCertificates?: readonly Uint8Array[];
}

/**
 * Proves an identity from an `auth` object (core §4.4). Returns the authenticated identity or
 * throws `NotAuthorizedError` (-31002, `data.reason` from `AUTH_FAILURE_REASONS` for a refused
 * credential) / `TimestampInvalidError` (-31011). Registered by auth type.
 */
export interface Authenticator {
  /** Whether it needs the session's challenge (signature types) or works inline at create (bearer). */
  readonly needsChallenge: boolean;
  /**
   * The identifier schemes it proves (`did:key`, `x509:san:dns`, `uri`, or a coarser `did`):
   * what the well-known `accepted_schemes` lists, and what a sender's scheme is checked against
   * before it runs. Absent: it decides by itself and is not advertised.
   */
  readonly schemes?: readonly string[];
  /**
   * The proven identity, or it with the assurance level this proof reaches (an x5c chain to an
   * anchor the operator rates `high`, say); without a level, the host's table for the auth type
   * decides.
   */
  authenticate(attempt: AuthAttempt): Promise<string | AuthOutcome>;
}

/** An authentication's result with more than the identity. */
export interface AuthOutcome {
  readonly identity: string;
  /** `low`, `substantial` or `high` (core §3.5.1), when the authenticator rates the proof itself. */
  readonly assurance?: string;
}

/** The identity and how it was proven, from what an authenticator returned. */
export function authOutcome(result: string | AuthOutcome, type: string): { identity: string; how: AuthenticatedWith } {
  if (typeof result === 'string') return { identity: result, how: { type } };
  return {
    identity: result.identity,
    how: result.assurance === undefined ? { type } : { type, assurance: result.assurance },
  };
}
