import type { DidWebResolver } from '../auth/did-web.js';
import type { TrustAnchors } from '../auth/x509.js';
import type { DocumentFetch } from '../documents/fetch-document.js';

/** The formats this package verifies (`dc+sd-jwt` is the newer media type of the same thing). */
export const SD_JWT_FORMATS: readonly string[] = ['vc+sd-jwt', 'dc+sd-jwt'];

/** The trust frameworks of core §5.6.1 we recognise; only `x509_pki` is evaluated. */
export const KNOWN_TRUST_FRAMEWORKS: readonly string[] = ['x509_pki', 'eidas_lote', 'openid_federation', 'external'];

/**
 * A relying party's identity-assertion policy (core §5.6): which formats it accepts, which claims
 * must be disclosed, and which issuers it trusts.
 */
export interface AssertionPolicy {
  /** Accepted `format`s; default `['vc+sd-jwt']`. Others are `unsupported_format`. */
  readonly formats?: readonly string[];
  /** Claims that must be disclosed (top-level names); else `insufficient_claims`. */
  readonly requiredClaims?: readonly string[];
  /**
   * Issuers trusted by identifier: DIDs (`did:key`, `did:jwk`; `did:web` with a resolver) and
   * `https://` issuer identifiers (keys from their JWT VC issuer metadata, fetched).
   */
  readonly trustedIssuers?: readonly string[];
  /** CA certificates an issuer's `x5c` must chain to (the `x509_pki` framework). */
  readonly trustAnchors?: TrustAnchors;
  /**
   * Frameworks it accepts (the `accepted_trust_frameworks` it tells senders); default `x509_pki`
   * when there are anchors. Hints of other frameworks are recognised and reported, never followed.
   */
  readonly trustFrameworks?: readonly string[];
  /** A session must present an acceptable assertion when it authenticates (default true). */
  readonly required?: boolean;
  /** Clock tolerance for `exp`, `nbf` and `iat`, default 60 s. */
  readonly skewSeconds?: number;
  /** Oldest key-binding JWT accepted (its `iat`), default 300 s. */
  readonly maxPresentationAgeSeconds?: number;
  /** Longest `vp_token` verified, default 16 KiB. */
  readonly maxTokenChars?: number;
  /** Presentations verified in one message, default 4. */
  readonly maxAssertions?: number;
}

/** What verification fetches and resolves with. Nothing is fetched without `fetch`. */
export interface AssertionDeps {
  /** For issuer metadata and JWKS (`https://` issuers) and status lists: the guarded fetcher on a server. */
  readonly fetch?: DocumentFetch;
  /** Origins fetched over plain http (tests, closed deployments); all else must be https. */
  readonly httpOrigins?: readonly string[];
  /** For `did:web` issuers. */
  readonly didWeb?: DidWebResolver;
  readonly now?: () => number;
}

/** A policy with every default filled in. */
export interface ResolvedPolicy {
  readonly formats: readonly string[];
  readonly requiredClaims: readonly string[];
  readonly trustedIssuers: ReadonlySet<string>;
  readonly trustAnchors: TrustAnchors | undefined;
  readonly trustFrameworks: readonly string[];
  readonly required: boolean;
  readonly skewSeconds: number;
  readonly maxPresentationAgeSeconds: number;
  readonly maxTokenChars: number;
  readonly maxAssertions: number;
}

function hasAnchors(anchors: TrustAnchors | undefined): boolean {
  return anchors !== undefined && (typeof anchors === 'string' || anchors instanceof Uint8Array || anchors.length > 0);
}

export function resolvePolicy(policy: AssertionPolicy): ResolvedPolicy {
  return {
    formats: policy.formats ?? ['vc+sd-jwt'],
    requiredClaims: policy.requiredClaims ?? [],
    trustedIssuers: new Set(policy.trustedIssuers ?? []),
    trustAnchors: hasAnchors(policy.trustAnchors) ? policy.trustAnchors : undefined,
    trustFrameworks: policy.trustFrameworks ?? (hasAnchors(policy.trustAnchors) ? ['x509_pki'] : []),
    required: policy.required ?? true,
    skewSeconds: policy.skewSeconds ?? 60,
    maxPresentationAgeSeconds: policy.maxPresentationAgeSeconds ?? 300,
    maxTokenChars: policy.maxTokenChars ?? 16 * 1024,
    maxAssertions: policy.maxAssertions ?? 4,
  };
}
