import type { Auth } from '@wmp/jsonrpc-envelope';
import type { ChallengeRecord } from '../session-model.js';

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
}

/**
 * Proves an identity from an `auth` object (core §4.4). Returns the authenticated identity or
 * throws `NotAuthorizedError` (-31002) / `TimestampInvalidError` (-31011). Registered by auth type.
 */
export interface Authenticator {
  /** Whether it needs the session's challenge (signature types) or works inline at create (bearer). */
  readonly needsChallenge: boolean;
  authenticate(attempt: AuthAttempt): Promise<string>;
}
