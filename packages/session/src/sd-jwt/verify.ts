// Verifies one SD-JWT VC presentation (core §5.6): the issuer's signature by a trusted key, the
// times, the disclosures, the key binding JWT (nonce = the session challenge, aud = the session
// or group id, fresh) and, when the credential has one, its status list entry. Checks run in a
// fixed order so that the reason is the first thing wrong: trust, signature, time, the rest.
import { SDJwt } from '@sd-jwt/core';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { timingSafeEqualString } from '@wmp/jcs-signing';
import type { AssertionRejectionReason } from '../assertions/checker.js';
import type { DocumentCache } from '../documents/document-cache.js';
import { fetchDocument } from '../documents/fetch-document.js';
import { decodeCompactJwt, importPublicJwk, verifyDecodedJwt } from '../jwt/compact-jwt.js';
import { type DecodedDisclosure, disclosedNames, disclosuresReferenced } from './disclosures.js';
import { refuse, SdJwtVerificationError } from './failure.js';
import { hasher } from './hashing.js';
import { type IssuerTrust, type RootCaHint, trustedIssuerKey } from './issuer-keys.js';

/** The `typ` of an SD-JWT VC's issuer-signed JWT (both media types name the same format). */
const SD_JWT_VC_TYPES: ReadonlySet<string> = new Set(['vc+sd-jwt', 'dc+sd-jwt']);

/** Registered claims, not shown as the holder's. */
const REGISTERED = new Set(['_sd', '_sd_alg', 'cnf', 'status', 'iss', 'iat', 'nbf', 'exp', 'vct', 'vct#integrity']);

export interface PresentationExpectations {
  /**
   * The session challenge the key binding JWT's `nonce` must be, and the audiences accepted for
   * its `aud`; both undefined where another relay checked that binding already (a delegation a
   * peer relay forwards): the key binding JWT's signature, time and `sd_hash` still hold.
   */
  readonly nonce: string | undefined;
  readonly audiences: readonly string[] | undefined;
  readonly now: number;
  readonly skewSeconds: number;
  readonly maxAgeSeconds: number;
  readonly maxTokenChars: number;
  /** The `root_ca` of an `x509_pki` hint that was followed. */
  readonly rootCa?: RootCaHint;
}

export interface VerifiedSdJwt {
  readonly issuer: string;
  readonly trustedBy: 'x509_pki' | 'did' | 'issuer_jwks';
  readonly vct: string;
  readonly claims: Record<string, unknown>;
  readonly disclosed: string[];
  readonly expiresAt: number | undefined;
  /** The holder's key the credential is bound to (`cnf.jwk`), as it says. */
  readonly holderKey: unknown;
}

export interface SdJwtVerifierDeps {
  readonly trust: IssuerTrust;
  /** Status list tokens by URI. */
  readonly statusLists: DocumentCache<string>;
}

function numeric(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `exp` past is `expired`; `nbf` or `iat` in the future is `invalid_proof` (seconds since the epoch). */
function checkTimes(payload: Readonly<Record<string, unknown>>, now: number, skew: number): void {
  const t = now / 1000;
  const exp = numeric(payload.exp);
  if (payload.exp !== undefined && exp === undefined) refuse('invalid_proof');
  if (exp !== undefined && exp + skew < t) refuse('expired');
  for (const claim of ['nbf', 'iat'] as const) {
    const v = numeric(payload[claim]);
    if (payload[claim] !== undefined && (v === undefined || v - skew > t)) refuse('invalid_proof');
  }
}

/** Verifies `token` as a key-bound SD-JWT VC presentation; throws `SdJwtVerificationError`. */
export async function verifySdJwtPresentation(
  token: unknown,
  expected: PresentationExpectations,
  deps: SdJwtVerifierDeps,
): Promise<VerifiedSdJwt> {
  if (typeof token !== 'string' || token.length > expected.maxTokenChars) refuse('invalid_proof');
  const issuerJwt = token.slice(0, token.indexOf('~') < 0 ? token.length : token.indexOf('~'));
  const decoded = decodeCompactJwt(issuerJwt, expected.maxTokenChars);
  if (decoded === undefined || !SD_JWT_VC_TYPES.has(String(decoded.header.typ))) refuse('invalid_proof');
  const { payload } = decoded;
  const signer = await trustedIssuerKey(
    decoded.header,
    payload,
    decoded.alg,
    deps.trust,
    expected.rootCa,
    expected.now,
  );
  if (!(await verifyDecodedJwt(decoded, signer.key))) refuse('invalid_proof');
  checkTimes(payload, expected.now, expected.skewSeconds);
  if (typeof payload.vct !== 'string') refuse('invalid_proof');

  let sdjwt: SDJwt;
  try {
    sdjwt = await SDJwt.fromEncode(token, hasher);
  } catch {
    refuse('invalid_proof');
  }
  const disclosures = (sdjwt.disclosures ?? []) as readonly DecodedDisclosure[];
  if (!disclosuresReferenced(payload, disclosures)) refuse('invalid_proof');

  // What the library decides (disclosures applied, the key binding JWT's signature by `cnf.jwk`,
  // its nonce and sd_hash, the status list) it decides with our keys and fetches; the issuer's
  // signature it only compares with the one verified above.
  let statusFailure: AssertionRejectionReason | undefined;
  const statusRef = (payload.status as { status_list?: { uri?: unknown } } | undefined)?.status_list;
  const instance = new SDJwtVcInstance({
    hasher,
    verifier: (data, sig) => data === decoded.signingInput && sig === issuerJwt.slice(issuerJwt.lastIndexOf('.') + 1),
    kbVerifier: async (data, sig, claims) => {
      const kb = decodeCompactJwt(`${data}.${sig}`);
      const jwk = (claims as { cnf?: { jwk?: unknown } }).cnf?.jwk;
      const key = kb === undefined ? undefined : await importPublicJwk(jwk, kb.alg);
      return kb !== undefined && key !== undefined && verifyDecodedJwt(kb, key);
    },
    statusListFetcher: async (uri) => {
      try {
        return await deps.statusLists.get(uri, async () => {
          const { text } = await fetchDocument(uri, 'application/statuslist+jwt', deps.trust.documents);
          return text.trim();
        });
      } catch (e) {
        statusFailure = 'invalid_proof';
        throw e;
      }
    },
    statusVerifier: async (data, sig) => {
      statusFailure = 'invalid_proof';
      const list = decodeCompactJwt(`${data}.${sig}`, deps.trust.documents.maxBytes);
      if (list === undefined || list.header.typ !== 'statuslist+jwt' || list.payload.sub !== statusRef?.uri) {
        return false;
      }
      // Signed by a key as trusted as the credential's (its issuer's own, by default).
      const claims = { ...list.payload, iss: list.payload.iss ?? payload.iss };
      const key = await trustedIssuerKey(list.header, claims, list.alg, deps.trust, expected.rootCa, expected.now);
      const ok = await verifyDecodedJwt(list, key.key);
      if (ok) statusFailure = undefined;
      return ok;
    },
    statusValidator: async (status) => {
      if (status !== 0) {
        statusFailure = 'revoked';
        throw new SdJwtVerificationError('revoked');
      }
    },
  });
  // Unbound to a session here: the key binding's own nonce is the one it is checked against.
  const nonce = expected.nonce ?? keyBindingNonceOf(token);
  let result: Awaited<ReturnType<SDJwtVcInstance['verify']>>;
  try {
    result = await instance.verify(token, {
      keyBindingNonce: nonce,
      currentDate: Math.floor(expected.now / 1000),
      skewSeconds: expected.skewSeconds,
    });
  } catch (e) {
    if (statusFailure !== undefined) refuse(statusFailure);
    if (e instanceof SdJwtVerificationError) throw e;
    refuse('invalid_proof');
  }
  const kb = result.kb?.payload as { aud?: unknown; iat?: unknown; nonce?: unknown } | undefined;
  if (kb === undefined || typeof kb.nonce !== 'string' || !timingSafeEqualString(kb.nonce, nonce)) {
    refuse('invalid_proof');
  }
  if (typeof kb.aud !== 'string' || (expected.audiences !== undefined && !expected.audiences.includes(kb.aud))) {
    refuse('invalid_proof');
  }
  const iat = numeric(kb.iat);
  const t = expected.now / 1000;
  if (iat === undefined || iat - expected.skewSeconds > t || iat < t - expected.maxAgeSeconds) refuse('invalid_proof');

  const claims: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((result.payload ?? {}) as Record<string, unknown>)) {
    if (!REGISTERED.has(k)) claims[k] = v;
  }
  const exp = numeric(payload.exp);
  return {
    issuer: signer.issuer,
    trustedBy: signer.trustedBy,
    vct: payload.vct,
    claims,
    disclosed: disclosedNames(disclosures),
    expiresAt: exp === undefined ? undefined : exp * 1000,
    holderKey: (payload.cnf as { jwk?: unknown } | undefined)?.jwk,
  };
}

/** The `nonce` the presentation's key binding JWT (its last `~` part) claims; '' when none. */
function keyBindingNonceOf(token: string): string {
  const kb = decodeCompactJwt(token.slice(token.lastIndexOf('~') + 1));
  return typeof kb?.payload.nonce === 'string' ? kb.payload.nonce : '';
}
