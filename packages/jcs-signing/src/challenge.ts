import { NotAuthorizedError, SignatureInvalidError, TimestampInvalidError } from '@wmp/jsonrpc-envelope';
import { b64urlEncode, randomBytes } from './bytes.js';
import { jcsBytes } from './jcs.js';
import { signDetached, verifyDetached } from './jws.js';
import type { Signer } from './keypair.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';

/** What a signed challenge covers (core §4.4.3). */
export interface ChallengeClaims {
  readonly challenge: string;
  readonly session_id: string;
  readonly sender: string;
  /** RFC 3339 time of signing. */
  readonly timestamp: string;
}

/** The clock skew WMP tolerates on self-asserted timestamps (core §8.5.1). */
export const WMP_SKEW_SECONDS = 30;

/** A fresh challenge: `ch-` + 128 random bits, base64url. */
export function createChallenge(): string {
  return `ch-${b64urlEncode(randomBytes(16))}`;
}

/** Signs the challenge claims: a detached JWS over their JCS, to send in a `signed_challenge` auth. */
export async function signChallenge(claims: ChallengeClaims, signer: Signer): Promise<string> {
  return signDetached(jcsBytes(pick(claims)), signer);
}

export interface VerifyChallengeOptions {
  readonly resolver?: KeyResolver;
  /** The verifier's clock, in ms since the epoch. */
  readonly now?: number;
  readonly skewSeconds?: number;
}

/**
 * Verifies a signed challenge against the claims the verifier expects (its own challenge and
 * session id, the sender being authenticated, the timestamp the client sent). Returns the key.
 * A timestamp outside the skew window is -31011 (`clock_skew`); anything else is -31002.
 * Single use and expiry of the challenge are the session store's job.
 */
export async function verifyChallenge(
  signature: string,
  claims: ChallengeClaims,
  options: VerifyChallengeOptions = {},
): Promise<Uint8Array> {
  const now = options.now ?? Date.now();
  const skew = options.skewSeconds ?? WMP_SKEW_SECONDS;
  const at = typeof claims.timestamp === 'string' ? Date.parse(claims.timestamp) : Number.NaN;
  if (Number.isNaN(at) || Math.abs(now - at) > skew * 1000) {
    throw new TimestampInvalidError({
      reason: 'clock_skew',
      acceptable_window_seconds: skew,
      server_time: new Date(now).toISOString(),
    });
  }
  try {
    const { publicKey } = await verifyDetached(signature, jcsBytes(pick(claims)), {
      key: options.resolver ?? didKeyResolver,
      signer: claims.sender,
    });
    return publicKey;
  } catch (e) {
    if (e instanceof SignatureInvalidError) throw new NotAuthorizedError({ reason: 'invalid_signed_challenge' });
    throw e;
  }
}

/** Exactly the four claims, whatever else the caller's object carries. */
function pick(c: ChallengeClaims): ChallengeClaims {
  return { challenge: c.challenge, session_id: c.session_id, sender: c.sender, timestamp: c.timestamp };
}
