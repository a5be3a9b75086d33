// The `sign` flow's proofs (core §6.4): a compact JWT by the participant's key over the nonce and
// audience (`generate_proof`), plus the SHA-256 of the document (`sign_document`) or of the
// operation (`authorize`). The participant's SDK signs it after its application consented; the
// initiator's verifies it against the identity it asked. Browser-safe.
import {
  b64urlEncode,
  didOf,
  jcsBytes,
  type KeyResolver,
  publicKeyFromDidJwk,
  publicKeyFromDidKey,
  type Signer,
  sha256,
  timingSafeEqualString,
  utf8,
} from '@wmp/jcs-signing';
import { SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { algorithmFitsKey, importVerifyKey, type JwsSigner } from '../auth/jws.js';
import type { ResponderIdentity } from '../auth/responder.js';
import type { TrustAnchors } from '../auth/x509.js';
import { decodeCompactJwt, ed25519Jwk, importPublicJwk, signCompactJwt, verifyDecodedJwt } from '../jwt/compact-jwt.js';
import type { SignAction, SignRequest } from './requests.js';

/** The `typ` of each action's proof. */
export const PROOF_TYPES: Readonly<Record<SignAction, string>> = {
  generate_proof: 'openid4vci-proof+jwt',
  sign_document: 'wmp-document-signature+jwt',
  authorize: 'wmp-authorization+jwt',
};

/** The claim holding the hash of what was signed, per action. */
const HASH_CLAIMS: Readonly<Record<SignAction, string | undefined>> = {
  generate_proof: undefined,
  sign_document: 'document_hash',
  authorize: 'authorization_hash',
};

/** Who signs a proof: an identifier and its key (with the chain, for an X.509 identity). */
export interface ProofSigner {
  readonly id: string;
  readonly signer: JwsSigner;
  readonly x5c?: readonly string[];
}

/** An Ed25519 DID signer or an X.509 identity (what a responder proves itself with) as a proof signer. */
export function proofSignerOf(identity: ResponderIdentity): ProofSigner {
  if ('x5c' in identity) return { id: identity.id, signer: identity.signer, x5c: identity.x5c };
  const signer: Signer = identity.signer;
  return { id: identity.id, signer: { alg: 'EdDSA', kid: signer.kid, sign: (data) => signer.sign(data) } };
}

/** SHA-256 (base64url) of a payload: a string's UTF-8, an object's JCS. */
export function payloadHash(payload: unknown): string {
  return b64urlEncode(sha256(typeof payload === 'string' ? utf8(payload) : jcsBytes(payload)));
}

function claimsOf(request: SignRequest, signer: string, sessionId: string, now: number): Record<string, unknown> {
  const hashClaim = HASH_CLAIMS[request.action];
  return {
    iss: signer,
    aud: request.audience ?? sessionId,
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    iat: Math.floor(now / 1000),
    ...(hashClaim === undefined ? {} : { [hashClaim]: payloadHash(request.payload), hash_alg: 'sha-256' }),
  };
}

/** The proof of `request`, signed by `signer`, for the flow's session. */
export function signProof(
  request: SignRequest,
  signer: ProofSigner,
  context: { readonly sessionId: string; readonly now?: number },
): Promise<string> {
  const header = { typ: PROOF_TYPES[request.action], ...(signer.x5c ? { x5c: [...signer.x5c] } : {}) };
  return signCompactJwt(
    header,
    claimsOf(request, signer.id, context.sessionId, context.now ?? Date.now()),
    signer.signer,
  );
}

/** What a proof is checked against: who was asked to sign, in which session, and how keys are found. */
export interface ProofExpectations {
  readonly signer: string;
  readonly sessionId: string;
  readonly now?: number;
  readonly skewSeconds?: number;
  /** Oldest `iat` accepted, default 600 s. */
  readonly maxAgeSeconds?: number;
  /** For X.509 signers: the anchors their `x5c` must chain to. */
  readonly trustAnchors?: TrustAnchors;
  /** For signers of other DID methods (Ed25519 keys), e.g. `DidWebResolver.keyResolver()`. */
  readonly resolver?: KeyResolver;
}

export interface VerifiedProof {
  readonly signer: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

const invalid = (reason: string) => new SignatureInvalidError({ reason });

async function signerKey(
  header: Readonly<Record<string, unknown>>,
  alg: Parameters<typeof importPublicJwk>[1],
  expected: ProofExpectations,
  now: number,
): Promise<CryptoKey> {
  const id = expected.signer;
  if (header.x5c !== undefined) {
    if (expected.trustAnchors === undefined) throw invalid('untrusted_chain');
    // Loaded on demand: pkijs only for those who verify X.509 signers.
    const [x509, { validateChain }] = await Promise.all([import('../auth/x509.js'), import('../auth/x509-chain.js')]);
    try {
      const chain = x509.parseX5c(header.x5c);
      await validateChain(chain, x509.parseTrustAnchors(expected.trustAnchors), now);
      const leaf = await x509.leafInfo(chain[0]!);
      x509.checkLeafIdentity(id, leaf);
      if (leaf.key === undefined || !algorithmFitsKey(alg, leaf.key)) throw new Error('key');
      return await importVerifyKey(alg, 'spki', leaf.spki);
    } catch {
      throw invalid('untrusted_chain');
    }
  }
  if (typeof header.kid === 'string' && didOf(header.kid) !== id) throw invalid('wrong_signer');
  let raw: Uint8Array | undefined;
  try {
    if (id.startsWith('did:key:')) raw = publicKeyFromDidKey(id);
    else if (id.startsWith('did:jwk:')) raw = publicKeyFromDidJwk(id);
    else if (typeof header.kid === 'string') raw = await expected.resolver?.resolve(header.kid);
  } catch {
    raw = undefined;
  }
  const key = raw === undefined ? undefined : await importPublicJwk(ed25519Jwk(raw), alg);
  if (key === undefined) throw invalid('unknown_key');
  return key;
}

/**
 * Verifies a `sign` flow's proof: signed by `expected.signer` (its DID's key, or an X.509 chain
 * to the anchors naming it), of the requested action's type, over the request's nonce, audience
 * and payload hash, and recent. Throws -31010 with `data.reason`.
 */
export async function verifyProof(
  proof: unknown,
  request: SignRequest,
  expected: ProofExpectations,
): Promise<VerifiedProof> {
  const decoded = decodeCompactJwt(proof);
  if (decoded === undefined) throw invalid('malformed');
  const { header, payload } = decoded;
  if (header.typ !== PROOF_TYPES[request.action]) throw invalid('wrong_type');
  if (payload.iss !== expected.signer) throw invalid('wrong_signer');
  const now = expected.now ?? Date.now();
  const key = await signerKey(header, decoded.alg, expected, now);
  if (!(await verifyDecodedJwt(decoded, key))) throw invalid('bad_signature');
  const aud = request.audience ?? expected.sessionId;
  if (typeof payload.aud !== 'string' || payload.aud !== aud) throw invalid('audience_mismatch');
  if (
    request.nonce !== undefined &&
    (typeof payload.nonce !== 'string' || !timingSafeEqualString(payload.nonce, request.nonce))
  ) {
    throw invalid('nonce_mismatch');
  }
  const hashClaim = HASH_CLAIMS[request.action];
  if (hashClaim !== undefined && payload[hashClaim] !== payloadHash(request.payload)) throw invalid('hash_mismatch');
  const iat = payload.iat;
  const t = now / 1000;
  const skew = expected.skewSeconds ?? 60;
  if (typeof iat !== 'number' || iat - skew > t || iat < t - (expected.maxAgeSeconds ?? 600)) throw invalid('stale');
  return { signer: expected.signer, claims: payload };
}
