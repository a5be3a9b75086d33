import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Authenticator } from './authenticator.js';

export interface BearerOptions {
  /** The issuer's verification key(s): a key, or a function such as jose's createLocalJWKSet. */
  readonly key: CryptoKey | Uint8Array | JWTVerifyGetKey;
  readonly issuer: string | readonly string[];
  /** Our own identifier or URL: tokens for anyone else are refused. */
  readonly audience: string | readonly string[];
  readonly algorithms?: readonly string[];
  readonly clockToleranceSeconds?: number;
}

/**
 * `bearer` (core §4.4.2): a JWT checked for signature, issuer, audience and expiry. The identity is
 * its `sub`, which must equal `wmp.sender` when the message names one. Works inline at create.
 */
export function bearerAuthenticator(options: BearerOptions): Authenticator {
  return {
    needsChallenge: false,
    async authenticate({ auth, sender, now }) {
      if (typeof auth.token !== 'string') throw new NotAuthorizedError({ reason: 'token required' });
      let sub: string | undefined;
      try {
        const verifyOptions = {
          issuer: options.issuer as string | string[],
          audience: options.audience as string | string[],
          currentDate: new Date(now),
          requiredClaims: ['exp', 'sub'],
          ...(options.algorithms ? { algorithms: [...options.algorithms] } : {}),
          ...(options.clockToleranceSeconds === undefined ? {} : { clockTolerance: options.clockToleranceSeconds }),
        };
        const { payload } =
          typeof options.key === 'function'
            ? await jwtVerify(auth.token, options.key, verifyOptions)
            : await jwtVerify(auth.token, options.key, verifyOptions);
        sub = payload.sub;
      } catch {
        throw new NotAuthorizedError({ reason: 'invalid bearer token' });
      }
      if (!sub) throw new NotAuthorizedError({ reason: 'invalid bearer token' });
      if (sender !== undefined && sender !== sub)
        throw new NotAuthorizedError({ reason: 'token subject is not the sender' });
      return sub;
    },
  };
}
