import { didKeyResolver, type KeyResolver, timingSafeEqualString, verifyChallenge } from '@wmp/jcs-signing';
import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import type { Authenticator } from './authenticator.js';

/**
 * `signed_challenge` (core §4.4.3): a detached JWS by the sender's key over JCS
 * `{challenge, session_id, sender, timestamp}`. did:key and did:jwk resolve out of the box; pass a
 * resolver for other schemes. The timestamp comes from `auth.timestamp` or `wmp.timestamp`.
 */
export function signedChallengeAuthenticator(
  options: { resolver?: KeyResolver; skewSeconds?: number } = {},
): Authenticator {
  const resolver = options.resolver ?? didKeyResolver;
  return {
    needsChallenge: true,
    async authenticate({ auth, sessionId, sender, challenge, timestamp, now }) {
      if (!sender) throw new NotAuthorizedError({ reason: 'sender required' });
      if (!challenge || typeof auth.challenge !== 'string' || !timingSafeEqualString(auth.challenge, challenge.value)) {
        throw new NotAuthorizedError({ reason: 'unknown or used challenge' });
      }
      if (typeof auth.signature !== 'string') throw new NotAuthorizedError({ reason: 'signature required' });
      const signedAt = typeof auth.timestamp === 'string' ? auth.timestamp : timestamp;
      if (signedAt === undefined) throw new NotAuthorizedError({ reason: 'timestamp required' });
      await verifyChallenge(
        auth.signature,
        { challenge: challenge.value, session_id: sessionId, sender, timestamp: signedAt },
        { resolver, now, ...(options.skewSeconds === undefined ? {} : { skewSeconds: options.skewSeconds }) },
      );
      return sender;
    },
  };
}
