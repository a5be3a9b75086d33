// What the session engine needs of an identity-assertion verifier (core §5.6): the interface a
// `WmpServer` takes, with no verification library behind it (the SD-JWT VC one is
// `@wmp/session/sd-jwt`, so that applications that verify nothing load nothing).
import { IdentityAssertionInvalidError, type WmpError } from '@wmp/jsonrpc-envelope';

/** The -31012 `data.reason` values (wmp-tables §2.4). */
export const ASSERTION_REJECTION_REASONS = [
  'unsupported_format',
  'insufficient_claims',
  'untrusted_issuer',
  'invalid_proof',
  'expired',
  'revoked',
] as const;

export type AssertionRejectionReason = (typeof ASSERTION_REJECTION_REASONS)[number];

/** What a relying party tells a sender it accepts (wmp-tables §2.4), and nothing more. */
export interface AssertionDiagnostics {
  readonly acceptedFormats: readonly string[];
  readonly requiredClaims: readonly string[];
  readonly acceptedTrustFrameworks: readonly string[];
}

/** -31012 with the §2.4 diagnostics: the reason and what would be accepted. */
export function assertionRejected(reason: AssertionRejectionReason, diagnostics: AssertionDiagnostics): WmpError {
  return new IdentityAssertionInvalidError({
    reason,
    accepted_formats: [...diagnostics.acceptedFormats],
    required_claims: [...diagnostics.requiredClaims],
    accepted_trust_frameworks: [...diagnostics.acceptedTrustFrameworks],
  });
}

/** What a presentation is checked against: this session's challenge and ids. */
export interface AssertionContext {
  /** The session's challenge: the presentation's nonce must be it. */
  readonly nonce: string | undefined;
  /** What its audience may be: the session id, and the MLS group id when there is one. */
  readonly audiences: readonly string[];
  /** The identity that presents it (authenticated on the connection). */
  readonly presenter: string | undefined;
  readonly now: number;
}

/** How one trust hint of an assertion was treated (core §5.6.1). */
export interface TrustHintOutcome {
  readonly framework: string;
  /** `followed`: used to validate; `unsupported`: a framework we recognise but do not evaluate; `unknown`: not one we know. */
  readonly outcome: 'followed' | 'unsupported' | 'unknown';
}

/** A presentation that verified: who issued it, what it discloses, how it was trusted. */
export interface VerifiedAssertion {
  readonly format: string;
  readonly issuer: string;
  /** The credential type (`vct` of an SD-JWT VC). */
  readonly credentialType: string | undefined;
  /** The claims the holder disclosed and those always visible (registered JWT claims left out). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** Names of the claims disclosed by the holder (selectively disclosable ones). */
  readonly disclosed: readonly string[];
  /** How the issuer was trusted: `x509_pki` (x5c to an anchor), `did` (a listed DID) or `issuer_jwks` (a listed issuer). */
  readonly trustedBy: 'x509_pki' | 'did' | 'issuer_jwks';
  /** The credential's `exp`, in ms since the epoch. */
  readonly expiresAt: number | undefined;
  readonly presenter: string | undefined;
  readonly hints: readonly TrustHintOutcome[];
}

/**
 * A relying party's identity-assertion check (core §5.6), as a `WmpServer` runs it: on
 * `wmp.session.authenticate` (with `required`, a session is authenticated only with one) and on
 * any message that carries `wmp.identity_assertions`. Failures are -31012 with the §2.4 data.
 */
export interface AssertionChecker {
  /** A session must present an acceptable assertion when it authenticates. */
  readonly required: boolean;
  readonly diagnostics: AssertionDiagnostics;
  /** Verifies every assertion (all must pass); throws -31012. */
  verify(assertions: readonly unknown[], context: AssertionContext): Promise<readonly VerifiedAssertion[]>;
}
