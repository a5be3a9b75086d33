import type { Authenticator } from './authenticator.js';
import { challengeInputOf, challengePayload } from './challenge.js';
import {
  algorithmFitsKey,
  decodeJws,
  importVerifyKey,
  JWS_ALGORITHMS,
  type JwsAlgorithm,
  verifyDecodedJws,
} from './jws.js';
import { authFailure } from './reasons.js';
import { schemeOf } from './schemes.js';
import {
  checkLeafIdentity,
  type LeafInfo,
  leafInfo,
  parseTrustAnchors,
  parseX5c,
  type TrustAnchors,
  type X5cLimits,
} from './x509.js';
import { type AssuranceAnchors, chainAssurance, parseAssuranceTiers } from './x509-assurance.js';
import { validateChain } from './x509-chain.js';
import type { CertificatePurpose } from './x509-extensions.js';

export const X509_SCHEMES: readonly string[] = ['x509:san:dns', 'x509:san:uri', 'x509:sha256'];

export interface X5cOptions extends X5cLimits {
  /** The operator's trust anchors (PEM text or DER); the leaf must chain to one of them. */
  readonly trustAnchors: TrustAnchors;
  readonly skewSeconds?: number;
  /** JWS algorithms accepted, default ES256, ES384, EdDSA, PS256, RS256. */
  readonly algorithms?: readonly JwsAlgorithm[];
  /** Schemes to declare, default x509:san:dns, x509:san:uri, x509:sha256. */
  readonly schemes?: readonly string[];
  /**
   * What the leaf must be for when it has an extKeyUsage: `clientAuth` (default) for senders,
   * `serverAuth` where the one proving is a responder such as a relay.
   */
  readonly purpose?: CertificatePurpose;
  /** Anchors whose chains the operator rates at a level (core §3.5.1), highest first. */
  readonly assuranceAnchors?: readonly AssuranceAnchors[];
}

/**
 * `x5c` (core §4.4.2): a certificate chain (`auth.x5c`, standard base64 DER, leaf first) and the
 * same detached JWS over JCS `{challenge, session_id, sender, timestamp}` as a `signed_challenge`,
 * made with the leaf's key. The chain is validated as RFC 5280 says (x509-chain.ts: validity,
 * basicConstraints and path length, keyUsage, extKeyUsage for `purpose`, name constraints, no CA
 * as leaf) up to a trust anchor, and the sender is one of the leaf's SANs (`x509:san:dns:` /
 * `x509:san:uri:`) or its fingerprint (`x509:sha256:`). Trust anchors are parsed here, once: a
 * bad one throws.
 */
export function x5cAuthenticator(options: X5cOptions): Authenticator {
  const anchors = parseTrustAnchors(options.trustAnchors);
  const algorithms = options.algorithms ?? JWS_ALGORITHMS;
  const schemes = options.schemes ?? X509_SCHEMES;
  const tiers = parseAssuranceTiers(options.assuranceAnchors);
  const purpose = options.purpose ?? 'clientAuth';
  return {
    needsChallenge: true,
    schemes,
    async authenticate(attempt) {
      const input = challengeInputOf(attempt, options.skewSeconds);
      if (!X509_SCHEMES.includes(schemeOf(input.sender))) throw authFailure('unsupported_scheme');
      // Cheap checks first: the header, the chain's shape, whether the leaf names the sender.
      const jws = decodeJws(input.signature, algorithms);
      const chain = parseX5c(attempt.auth.x5c, options);
      let leaf: LeafInfo;
      try {
        leaf = await leafInfo(chain[0]!);
      } catch {
        throw authFailure('untrusted_chain', 'malformed_certificate');
      }
      checkLeafIdentity(input.sender, leaf);
      if (!leaf.key || !algorithmFitsKey(jws.alg, leaf.key)) throw authFailure('unsupported_algorithm');
      await validateChain(chain, anchors, attempt.now, { purpose });
      let key: CryptoKey;
      try {
        key = await importVerifyKey(jws.alg, 'spki', leaf.spki);
      } catch {
        throw authFailure('unsupported_algorithm');
      }
      await verifyDecodedJws(jws, challengePayload(input), key);
      const assurance = await chainAssurance(chain, tiers, attempt.now, purpose);
      return assurance === undefined ? input.sender : { identity: input.sender, assurance };
    },
  };
}
