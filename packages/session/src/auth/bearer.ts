import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Authenticator } from './authenticator.js';
import { authFailure } from './reasons.js';

export interface BearerOptions {
  /** The issuer's verification key(s): a key, or a function such as jose's createLocalJWKSet. */
  readonly key: CryptoKey | Uint8Array | JWTVerifyGetKey;
  readonly issuer: string | readonly string[];
  /** Our own identifier or URL: tokens for anyone else are refused. */
  readonly audience: string | readonly string[];
  readonly algorithms?: readonly string[];
  readonly clockToleranceSeconds?: number;
  /**
   * The identifier schemes the issuer vouches for (`uri`, `did:key`, ...), as declared in
   * `accepted_schemes`; absent: any `sub` the issuer signs, and nothing is advertised.
   */
  readonly schemes?: readonly string[];
}

/**
 * Verifies an access token (signature, issuer, audience, expiry, a `sub`): -31002 `expired`,
 * `not_yet_valid`, `bad_signature`, `unsupported_algorithm`, else `invalid bearer token`.
 */
export async function verifyAccessToken(token: unknown, options: BearerOptions, now: number): Promise<JWTPayload> {
  if (typeof token !== 'string') throw new NotAuthorizedError({ reason: 'token required' });
  const verifyOptions = {
    issuer: options.issuer as string | string[],
    audience: options.audience as string | string[],
    currentDate: new Date(now),
    requiredClaims: ['exp', 'sub'],
    ...(options.algorithms ? { algorithms: [...options.algorithms] } : {}),
    ...(options.clockToleranceSeconds === undefined ? {} : { clockTolerance: options.clockToleranceSeconds }),
  };
  try {
    const { payload } =
      typeof options.key === 'function'
        ? await jwtVerify(token, options.key, verifyOptions)
        : await jwtVerify(token, options.key, verifyOptions);
    if (!payload.sub) throw new NotAuthorizedError({ reason: 'invalid bearer token' });
    return payload;
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw authFailure('expired');
    if (e instanceof errors.JWTClaimValidationFailed && (e.claim === 'nbf' || e.claim === 'iat')) {
      throw authFailure('not_yet_valid');
    }
    if (e instanceof errors.JWSSignatureVerificationFailed) throw authFailure('bad_signature');
    if (e instanceof errors.JOSEAlgNotAllowed) throw authFailure('unsupported_algorithm');
    throw new NotAuthorizedError({ reason: 'invalid bearer token' });
  }
}

/** The `cnf.jkt` of a DPoP-bound token (RFC 9449 §6.1), if any. */
export function boundThumbprint(payload: JWTPayload): string | undefined {
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  return cnf !== null && typeof cnf === 'object' && typeof cnf.jkt === 'string' ? cnf.jkt : undefined;
}

/**
 * `bearer` (core §4.4.2): a JWT checked for signature, issuer, audience and expiry. The identity is
 * its `sub`, which must equal `wmp.sender` when the message names one. Works inline at create. A
 * DPoP-bound token (`cnf.jkt`) is refused here (`dpop_invalid`): it goes with its proof as `dpop`.
 */
export function bearerAuthenticator(options: BearerOptions): Authenticator {
  return {
    needsChallenge: false,
    ...(options.schemes ? { schemes: options.schemes } : {}),
    async authenticate({ auth, sender, now }) {
      const payload = await verifyAccessToken(auth.token, options, now);
      if (boundThumbprint(payload) !== undefined) throw authFailure('dpop_invalid', 'proof_required');
      const sub = payload.sub!;
      if (sender !== undefined && sender !== sub)
        throw new NotAuthorizedError({ reason: 'token subject is not the sender' });
      return sub;
    },
  };
}
