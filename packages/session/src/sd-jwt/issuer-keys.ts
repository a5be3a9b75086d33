// The key that signed an SD-JWT VC (or its status list), and why we trust it (core §5.6.1):
// an `x5c` chained to the policy's anchors (`x509_pki`), a listed DID, or a listed `https://`
// issuer whose JWT VC issuer metadata names its keys. Anything else is `untrusted_issuer`.
import { publicKeyFromDidJwk, publicKeyFromDidKey } from '@wmp/jcs-signing';
import { type DidWebResolver, didPart } from '../auth/did-web.js';
import { algorithmFitsKey, importVerifyKey, type JwsAlgorithm } from '../auth/jws.js';
import type { ParsedCertificate } from '../auth/x509.js';
import type { DocumentCache } from '../documents/document-cache.js';
import { type DocumentFetchOptions, fetchableUrl, fetchJsonObject } from '../documents/fetch-document.js';
import { ed25519Jwk, importPublicJwk } from '../jwt/compact-jwt.js';
import { refuse } from './failure.js';

export interface TrustedKey {
  readonly key: CryptoKey;
  /** The issuer as the credential names it (`iss`). */
  readonly issuer: string;
  readonly trustedBy: 'x509_pki' | 'did' | 'issuer_jwks';
}

export interface IssuerTrust {
  readonly trustedIssuers: ReadonlySet<string>;
  /** The policy's anchors, parsed on first use; undefined: `x509_pki` is off. */
  readonly anchors: (() => Promise<readonly ParsedCertificate[]>) | undefined;
  readonly didWeb: DidWebResolver | undefined;
  readonly documents: DocumentFetchOptions;
  /** An issuer's keys (JWKS) by issuer identifier. */
  readonly issuerKeys: DocumentCache<readonly unknown[]>;
}

/** `root_ca` of the assertion's `x509_pki` hint, when it names one. */
export type RootCaHint = string | undefined;

const MAX_ISSUER_KEYS = 32;

async function fromX5c(
  x5c: unknown,
  iss: unknown,
  alg: JwsAlgorithm,
  trust: IssuerTrust,
  rootCa: RootCaHint,
  now: number,
): Promise<TrustedKey> {
  if (trust.anchors === undefined || typeof iss !== 'string') refuse('untrusted_issuer');
  // Loaded on demand: pkijs only for those who trust X.509 issuers.
  const [x509, { validateChain }] = await Promise.all([import('../auth/x509.js'), import('../auth/x509-chain.js')]);
  const all = await trust.anchors();
  const anchors = rootCa === undefined ? all : all.filter((a) => x509.anchorNamed(a, rootCa));
  if (anchors.length === 0) refuse('untrusted_issuer');
  let leaf: Awaited<ReturnType<typeof x509.leafInfo>>;
  try {
    const chain = x509.parseX5c(x5c);
    await validateChain(chain, anchors, now, { purpose: null });
    leaf = await x509.leafInfo(chain[0]!);
  } catch {
    refuse('untrusted_issuer');
  }
  // The issuer an https `iss` names must be the leaf's: a URI SAN, or its host a DNS SAN.
  const url = fetchableUrl(iss);
  const named =
    url !== undefined &&
    (leaf.uris.includes(iss) || leaf.dnsNames.some((n) => n.toLowerCase() === url.hostname.toLowerCase()));
  if (!named) refuse('untrusted_issuer');
  if (leaf.key === undefined || !algorithmFitsKey(alg, leaf.key)) refuse('invalid_proof');
  let key: CryptoKey;
  try {
    key = await importVerifyKey(alg, 'spki', leaf.spki);
  } catch {
    refuse('invalid_proof');
  }
  return { key, issuer: iss, trustedBy: 'x509_pki' };
}

async function fromDid(iss: string, kid: unknown, alg: JwsAlgorithm, trust: IssuerTrust): Promise<TrustedKey> {
  if (!trust.trustedIssuers.has(iss)) refuse('untrusted_issuer');
  if (kid !== undefined && (typeof kid !== 'string' || didPart(kid) !== iss)) refuse('invalid_proof');
  let jwk: unknown;
  if (iss.startsWith('did:key:') || iss.startsWith('did:jwk:')) {
    try {
      jwk = ed25519Jwk(iss.startsWith('did:key:') ? publicKeyFromDidKey(iss) : publicKeyFromDidJwk(iss));
    } catch {
      refuse('untrusted_issuer');
    }
  } else if (iss.startsWith('did:web:') && trust.didWeb !== undefined && typeof kid === 'string') {
    try {
      jwk = (await trust.didWeb.resolveKey(kid, 'assertionMethod')).jwk;
    } catch {
      refuse('untrusted_issuer');
    }
  } else {
    refuse('untrusted_issuer');
  }
  const key = await importPublicJwk(jwk, alg);
  if (key === undefined) refuse('invalid_proof');
  return { key, issuer: iss, trustedBy: 'did' };
}

/** SD-JWT VC issuer metadata (`/.well-known/jwt-vc-issuer` + the issuer's path): its keys. */
async function issuerJwks(iss: string, trust: IssuerTrust): Promise<readonly unknown[]> {
  const url = new URL(iss);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  const metadata = await fetchJsonObject(`${url.origin}/.well-known/jwt-vc-issuer${path}`, trust.documents);
  if (metadata.issuer !== iss) throw new Error('issuer mismatch');
  let jwks = metadata.jwks as { keys?: unknown } | undefined;
  if (jwks === undefined && typeof metadata.jwks_uri === 'string') {
    jwks = await fetchJsonObject(metadata.jwks_uri, trust.documents);
  }
  const keys = jwks?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_ISSUER_KEYS) throw new Error('no keys');
  return keys;
}

async function fromIssuerMetadata(
  iss: string,
  kid: unknown,
  alg: JwsAlgorithm,
  trust: IssuerTrust,
): Promise<TrustedKey> {
  if (!trust.trustedIssuers.has(iss)) refuse('untrusted_issuer');
  let keys: readonly unknown[];
  try {
    keys = await trust.issuerKeys.get(iss, () => issuerJwks(iss, trust));
  } catch {
    refuse('untrusted_issuer');
  }
  const candidates = keys.filter(
    (k) => (k as { kid?: unknown }).kid === kid || (kid === undefined && keys.length === 1),
  );
  if (candidates.length !== 1) refuse('invalid_proof');
  const key = await importPublicJwk(candidates[0], alg);
  if (key === undefined) refuse('invalid_proof');
  return { key, issuer: iss, trustedBy: 'issuer_jwks' };
}

/** The trusted key a JWT with this header and payload was signed with; throws `SdJwtVerificationError`. */
export async function trustedIssuerKey(
  header: Readonly<Record<string, unknown>>,
  payload: Readonly<Record<string, unknown>>,
  alg: JwsAlgorithm,
  trust: IssuerTrust,
  rootCa: RootCaHint,
  now: number,
): Promise<TrustedKey> {
  const iss = payload.iss;
  if (header.x5c !== undefined) return fromX5c(header.x5c, iss, alg, trust, rootCa, now);
  if (typeof iss !== 'string') refuse('untrusted_issuer');
  if (iss.startsWith('did:')) return fromDid(iss, header.kid, alg, trust);
  if (fetchableUrl(iss, trust.documents.httpOrigins) !== undefined) {
    return fromIssuerMetadata(iss, header.kid, alg, trust);
  }
  return refuse('untrusted_issuer');
}
