// `verifiable_presentation` delegation authorizations (core §3.3): an SD-JWT VC presentation that
// names the delegate (`sub`), is issued by the principal or by an issuer the operator trusts for
// it (then naming the principal in `principal`), grants actions (`scope`) until `exp`, and is
// key-bound to the delegate (its `cnf.jwk` is the delegate's key when the delegate's identifier
// is its key, and the key binding JWT is signed with it).
import { b64urlEncode, publicKeyFromDidJwk, publicKeyFromDidKey } from '@wmp/jcs-signing';
import type { ParsedCertificate, TrustAnchors } from '../auth/x509.js';
import {
  type DelegationFailure,
  type DelegationPresentationChecker,
  delegationRefused,
} from '../delegation/delegation.js';
import { DocumentCache } from '../documents/document-cache.js';
import { SdJwtVerificationError } from './failure.js';
import type { IssuerTrust } from './issuer-keys.js';
import type { AssertionDeps } from './policy.js';
import { type VerifiedSdJwt, verifySdJwtPresentation } from './verify.js';

export interface DelegationCredentialPolicy {
  /**
   * Issuers trusted to vouch for principals: a principal (exact, or a prefix ending in `*`) ->
   * issuer identifiers (DIDs, `https://` issuers). A principal always vouches for itself.
   */
  readonly issuersFor?: Readonly<Record<string, readonly string[]>>;
  /** CA certificates an issuer's `x5c` may chain to; such an issuer must still be listed for the principal. */
  readonly trustAnchors?: TrustAnchors;
  /** Clock tolerance, default 60 s. */
  readonly skewSeconds?: number;
  /** Oldest key binding JWT accepted (its `iat`), default 300 s. */
  readonly maxPresentationAgeSeconds?: number;
  /** Longest credential verified, default 16 KiB. */
  readonly maxTokenChars?: number;
}

const MAX_SCOPE = 16;

/** The issuers trusted for `principal`: itself, and those listed for it or for a prefix of it. */
function issuersFor(policy: DelegationCredentialPolicy, principal: string): Set<string> {
  const out = new Set([principal]);
  for (const [pattern, issuers] of Object.entries(policy.issuersFor ?? {})) {
    const matches = pattern.endsWith('*') ? principal.startsWith(pattern.slice(0, -1)) : pattern === principal;
    if (matches) for (const issuer of issuers) out.add(issuer);
  }
  return out;
}

/** Whether `jwk` is the Ed25519 key a did:key or did:jwk delegate is; undefined: its identifier names no key. */
function boundToDelegate(jwk: unknown, delegate: string): boolean | undefined {
  let key: Uint8Array;
  try {
    if (delegate.startsWith('did:key:')) key = publicKeyFromDidKey(delegate);
    else if (delegate.startsWith('did:jwk:')) key = publicKeyFromDidJwk(delegate);
    else return undefined;
  } catch {
    return undefined;
  }
  const j = jwk as { kty?: unknown; crv?: unknown; x?: unknown } | undefined;
  return j?.kty === 'OKP' && j.crv === 'Ed25519' && j.x === b64urlEncode(key);
}

function failureOf(e: unknown): DelegationFailure {
  if (!(e instanceof SdJwtVerificationError)) return 'invalid_proof';
  return e.reason === 'untrusted_issuer' || e.reason === 'expired' ? e.reason : 'invalid_proof';
}

/** Checks `verifiable_presentation` authorizations against `policy`; refusals are -31015. */
export function sdJwtDelegationChecker(
  policy: DelegationCredentialPolicy = {},
  deps: AssertionDeps = {},
): DelegationPresentationChecker {
  let anchors: Promise<ParsedCertificate[]> | undefined;
  const configured = policy.trustAnchors;
  const issuerKeys = new DocumentCache<readonly unknown[]>(deps.now ? { now: deps.now } : {});
  const statusLists = new DocumentCache<string>(deps.now ? { now: deps.now } : {});
  return {
    async verify(credential, expected) {
      const allowed = issuersFor(policy, expected.principal);
      const trust: IssuerTrust = {
        trustedIssuers: allowed,
        anchors:
          configured === undefined
            ? undefined
            : () => {
                anchors ??= import('../auth/x509.js').then((x509) => x509.parseTrustAnchors(configured));
                return anchors;
              },
        didWeb: deps.didWeb,
        documents: { fetch: deps.fetch, ...(deps.httpOrigins ? { httpOrigins: deps.httpOrigins } : {}) },
        issuerKeys,
      };
      let verified: VerifiedSdJwt;
      try {
        verified = await verifySdJwtPresentation(
          credential,
          {
            nonce: expected.binding?.nonce,
            audiences: expected.binding?.audiences,
            now: expected.now,
            skewSeconds: policy.skewSeconds ?? 60,
            maxAgeSeconds: policy.maxPresentationAgeSeconds ?? 300,
            maxTokenChars: policy.maxTokenChars ?? 16 * 1024,
          },
          { trust, statusLists },
        );
      } catch (e) {
        throw delegationRefused(failureOf(e));
      }
      // An x5c-chained issuer passes the anchors alone: it must be one trusted for this principal.
      if (!allowed.has(verified.issuer)) throw delegationRefused('untrusted_issuer');
      const { sub, principal, scope } = verified.claims as { sub?: unknown; principal?: unknown; scope?: unknown };
      if (sub !== expected.delegate) throw delegationRefused('delegate_mismatch');
      if (principal !== undefined ? principal !== expected.principal : verified.issuer !== expected.principal) {
        throw delegationRefused('principal_mismatch');
      }
      if (
        !Array.isArray(scope) ||
        scope.length === 0 ||
        scope.length > MAX_SCOPE ||
        !scope.every((a) => typeof a === 'string')
      ) {
        throw delegationRefused('malformed');
      }
      if (verified.expiresAt === undefined) throw delegationRefused('malformed');
      if (verified.holderKey === undefined || boundToDelegate(verified.holderKey, expected.delegate) === false) {
        throw delegationRefused('not_key_bound');
      }
      return { scope, validUntil: verified.expiresAt, issuer: verified.issuer };
    },
  };
}
