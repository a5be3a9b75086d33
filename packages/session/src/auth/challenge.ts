import { jcsBytes, timingSafeEqualString, WMP_SKEW_SECONDS } from '@wmp/jcs-signing';
import { NotAuthorizedError, TimestampInvalidError } from '@wmp/jsonrpc-envelope';
import type { AuthAttempt } from './authenticator.js';

/** What a challenge signature covers (core §4.4.3): always exactly these four members. */
export interface ChallengeInput {
  readonly challenge: string;
  readonly sessionId: string;
  readonly sender: string;
  readonly timestamp: string;
}

/** The JCS payload of a challenge signature. */
export function challengePayload(input: ChallengeInput): Uint8Array {
  return jcsBytes({
    challenge: input.challenge,
    session_id: input.sessionId,
    sender: input.sender,
    timestamp: input.timestamp,
  });
}

/**
 * The checks every challenge-answering authenticator makes first: a sender, the session's own
 * outstanding challenge (constant-time compared), a signature string, and a signing time within
 * the skew window (-31011 `clock_skew`). Returns what the signature must cover.
 */
export function challengeInputOf(
  attempt: AuthAttempt,
  skewSeconds = WMP_SKEW_SECONDS,
): ChallengeInput & { signature: string } {
  const { auth, sender, challenge, sessionId, now } = attempt;
  if (!sender) throw new NotAuthorizedError({ reason: 'sender required' });
  if (!challenge || typeof auth.challenge !== 'string' || !timingSafeEqualString(auth.challenge, challenge.value)) {
    throw new NotAuthorizedError({ reason: 'unknown or used challenge' });
  }
  if (typeof auth.signature !== 'string') throw new NotAuthorizedError({ reason: 'signature required' });
  const timestamp = typeof auth.timestamp === 'string' ? auth.timestamp : attempt.timestamp;
  if (timestamp === undefined) throw new NotAuthorizedError({ reason: 'timestamp required' });
  const at = Date.parse(timestamp);
  if (Number.isNaN(at) || Math.abs(now - at) > skewSeconds * 1000) {
    throw new TimestampInvalidError({
      reason: 'clock_skew',
      acceptable_window_seconds: skewSeconds,
      server_time: new Date(now).toISOString(),
    });
  }
  return { challenge: challenge.value, sessionId, sender, timestamp, signature: auth.signature };
}
