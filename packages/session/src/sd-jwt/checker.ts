// The SD-JWT VC `AssertionChecker` a WmpServer (a relay, an SDK responder) runs (core §5.6):
// the policy's formats, then the session binding (nonce, audience), then the presentation, then
// the required claims. Every refusal is -31012 with the §2.4 diagnostics and nothing more.
import { timingSafeEqualString } from '@wmp/jcs-signing';
import {
  type AssertionChecker,
  type AssertionContext,
  type AssertionRejectionReason,
  assertionRejected,
  type TrustHintOutcome,
  type VerifiedAssertion,
} from '../assertions/checker.js';
import type { ParsedCertificate } from '../auth/x509.js';
import { DocumentCache } from '../documents/document-cache.js';
import { SdJwtVerificationError } from './failure.js';
import type { IssuerTrust } from './issuer-keys.js';
import {
  type AssertionDeps,
  type AssertionPolicy,
  KNOWN_TRUST_FRAMEWORKS,
  type ResolvedPolicy,
  resolvePolicy,
  SD_JWT_FORMATS,
} from './policy.js';
import { verifySdJwtPresentation } from './verify.js';

/** How each hint is treated: `x509_pki` followed when the policy enables it; the rest only reported. */
function hintOutcomes(hints: unknown, policy: ResolvedPolicy): { outcomes: TrustHintOutcome[]; rootCa?: string } {
  const outcomes: TrustHintOutcome[] = [];
  let rootCa: string | undefined;
  for (const hint of Array.isArray(hints) ? hints.slice(0, 16) : []) {
    const framework = (hint as { framework?: unknown } | null)?.framework;
    if (typeof framework !== 'string') continue;
    if (framework === 'x509_pki' && policy.trustFrameworks.includes('x509_pki')) {
      const named = (hint as { root_ca?: unknown }).root_ca;
      if (typeof named === 'string' && named !== '') rootCa ??= named;
      outcomes.push({ framework, outcome: 'followed' });
    } else {
      outcomes.push({ framework, outcome: KNOWN_TRUST_FRAMEWORKS.includes(framework) ? 'unsupported' : 'unknown' });
    }
  }
  return rootCa === undefined ? { outcomes } : { outcomes, rootCa };
}

/**
 * Checks `vc+sd-jwt` presentations against `policy`. Issuer keys, JWKS and status lists are
 * fetched only through `deps.fetch` (on a server: the guarded fetcher), and cached.
 */
export function sdJwtAssertionChecker(policy: AssertionPolicy, deps: AssertionDeps = {}): AssertionChecker {
  const p = resolvePolicy(policy);
  const diagnostics = {
    acceptedFormats: p.formats,
    requiredClaims: p.requiredClaims,
    acceptedTrustFrameworks: p.trustFrameworks,
  };
  const reject = (reason: AssertionRejectionReason) => assertionRejected(reason, diagnostics);
  const now = deps.now;
  let anchors: Promise<ParsedCertificate[]> | undefined;
  const configured = p.trustAnchors;
  const trust: IssuerTrust = {
    trustedIssuers: p.trustedIssuers,
    anchors:
      configured !== undefined && p.trustFrameworks.includes('x509_pki')
        ? () => {
            // Loaded on demand: pkijs only for those who trust X.509 issuers.
            anchors ??= import('../auth/x509.js').then((x509) => x509.parseTrustAnchors(configured));
            return anchors;
          }
        : undefined,
    didWeb: deps.didWeb,
    documents: { fetch: deps.fetch, ...(deps.httpOrigins ? { httpOrigins: deps.httpOrigins } : {}) },
    issuerKeys: new DocumentCache(now ? { now } : {}),
  };
  const statusLists = new DocumentCache<string>(now ? { now } : {});

  const verifyOne = async (assertion: unknown, context: AssertionContext): Promise<VerifiedAssertion> => {
    const a = (assertion ?? {}) as Record<string, unknown>;
    if (a.type !== 'verifiable_presentation') throw reject('unsupported_format');
    const format = a.format;
    if (typeof format !== 'string' || !p.formats.includes(format) || !SD_JWT_FORMATS.includes(format)) {
      throw reject('unsupported_format');
    }
    // Bound to this session: its challenge and its id (a copy from another session stops here).
    const nonce = context.nonce;
    if (nonce === undefined || typeof a.nonce !== 'string' || !timingSafeEqualString(a.nonce, nonce)) {
      throw reject('invalid_proof');
    }
    if (typeof a.audience !== 'string' || !context.audiences.includes(a.audience)) throw reject('invalid_proof');
    const hints = hintOutcomes(a.trust_hints, p);
    let verified: Awaited<ReturnType<typeof verifySdJwtPresentation>>;
    try {
      verified = await verifySdJwtPresentation(
        a.vp_token,
        {
          nonce,
          audiences: context.audiences,
          now: context.now,
          skewSeconds: p.skewSeconds,
          maxAgeSeconds: p.maxPresentationAgeSeconds,
          maxTokenChars: p.maxTokenChars,
          ...(hints.rootCa === undefined ? {} : { rootCa: hints.rootCa }),
        },
        { trust, statusLists },
      );
    } catch (e) {
      if (e instanceof SdJwtVerificationError) throw reject(e.reason);
      throw reject('invalid_proof');
    }
    if (p.requiredClaims.some((claim) => !(claim in verified.claims))) throw reject('insufficient_claims');
    return {
      format,
      issuer: verified.issuer,
      credentialType: verified.vct,
      claims: verified.claims,
      disclosed: verified.disclosed,
      trustedBy: verified.trustedBy,
      expiresAt: verified.expiresAt,
      presenter: context.presenter,
      hints: hints.outcomes,
    };
  };

  return {
    required: p.required,
    diagnostics,
    async verify(assertions, context) {
      if (assertions.length > p.maxAssertions) throw reject('invalid_proof');
      const out: VerifiedAssertion[] = [];
      for (const assertion of assertions) out.push(await verifyOne(assertion, context));
      return out;
    },
  };
}
