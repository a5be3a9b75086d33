import { didKeyResolver, type KeyResolver, verifyEd25519 } from '@wmp/jcs-signing';
import type { Authenticator } from './authenticator.js';
import { challengeInputOf, challengePayload } from './challenge.js';
import { DidResolutionError, type DidWebResolver, didPart } from './did-web.js';
import { decodeJws, importVerifyKey, signingInput, verifyDecodedJws } from './jws.js';
import { authFailure } from './reasons.js';

export interface SignedChallengeOptions {
  /**
   * Finds Ed25519 keys of other DID methods; did:key and did:jwk resolve without it. With a
   * resolver and no `schemes`, every `did` is accepted and the resolver decides.
   */
  readonly resolver?: KeyResolver;
  /** Resolves did:web senders (Ed25519 or P-256 keys listed under `authentication`). */
  readonly didWeb?: DidWebResolver;
  readonly skewSeconds?: number;
  /** The schemes to declare; default did:key, did:jwk and, with `didWeb`, did:web. */
  readonly schemes?: readonly string[];
}

/**
 * `signed_challenge` (core §4.4.3): a detached JWS by the sender's key over JCS
 * `{challenge, session_id, sender, timestamp}`. did:key and did:jwk resolve out of the box,
 * did:web with `didWeb`, other DID methods through `resolver`. The timestamp comes from
 * `auth.timestamp` or `wmp.timestamp`. The `kid` must be a key of the sender's DID.
 */
export function signedChallengeAuthenticator(options: SignedChallengeOptions = {}): Authenticator {
  const resolver = options.resolver ?? didKeyResolver;
  const schemes =
    options.schemes ?? (options.resolver ? ['did'] : ['did:key', 'did:jwk', ...(options.didWeb ? ['did:web'] : [])]);
  return {
    needsChallenge: true,
    schemes,
    async authenticate(attempt) {
      const input = challengeInputOf(attempt, options.skewSeconds);
      const jws = decodeJws(input.signature, ['EdDSA', 'ES256']);
      if (jws.kid === undefined || didPart(jws.kid) !== input.sender) throw authFailure('bad_signature', 'kid');
      const payload = challengePayload(input);
      if (options.didWeb && input.sender.startsWith('did:web:')) {
        let key: Awaited<ReturnType<DidWebResolver['resolveKey']>>;
        try {
          key = await options.didWeb.resolveKey(jws.kid, 'authentication');
        } catch (e) {
          if (!(e instanceof DidResolutionError)) throw e;
          if (e.reason === 'unsupported_key') throw authFailure('unsupported_algorithm');
          throw authFailure('did_resolution_failed', e.reason);
        }
        if (key.alg !== jws.alg) throw authFailure('unsupported_algorithm');
        let cryptoKey: CryptoKey;
        try {
          cryptoKey = await importVerifyKey(key.alg, 'jwk', key.jwk);
        } catch {
          throw authFailure('did_resolution_failed', 'unsupported_key');
        }
        await verifyDecodedJws(jws, payload, cryptoKey);
        return input.sender;
      }
      // did:key, did:jwk and resolver-backed DIDs: Ed25519 keys on the fast path.
      if (jws.alg !== 'EdDSA') throw authFailure('unsupported_algorithm');
      let publicKey: Uint8Array | undefined;
      try {
        publicKey = await resolver.resolve(jws.kid);
      } catch {
        publicKey = undefined; // a resolver that chokes on the kid has no key for it
      }
      if (!publicKey) throw authFailure('did_resolution_failed', 'unknown_key');
      if (!verifyEd25519(publicKey, signingInput(jws.encodedHeader, payload), jws.signature)) {
        throw authFailure('bad_signature');
      }
      return input.sender;
    },
  };
}
