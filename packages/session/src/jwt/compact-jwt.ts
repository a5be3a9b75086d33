// Compact JWS / JWT (RFC 7515 §7.1, RFC 7519) as the sign flow's proofs and SD-JWT parts use
// them: signed with a `JwsSigner`, decoded strictly within bounds, verified with WebCrypto.
// Browser-safe.
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from '@wmp/jcs-signing';
import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import {
  algorithmFitsKey,
  importParams,
  JWS_ALGORITHMS,
  type JwsAlgorithm,
  type JwsSigner,
  type KeyDescription,
  verifySignature,
} from '../auth/jws.js';

/** Longest compact JWS decoded (header, payload and signature). */
export const MAX_COMPACT_JWS_CHARS = 32 * 1024;

export interface DecodedJwt {
  readonly header: Readonly<Record<string, unknown>>;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly alg: JwsAlgorithm;
  /** `<header>.<payload>`, what the signature covers. */
  readonly signingInput: string;
  readonly signature: Uint8Array;
}

const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

function objectOf(encoded: string, maxBytes: number): Record<string, unknown> | undefined {
  try {
    const value = parseStrictJson(fromUtf8(b64urlDecode(encoded)), { maxBytes, maxDepth: 16 });
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A compact JWS with a JSON object payload and an `alg` we verify; undefined when it is not one. */
export function decodeCompactJwt(token: unknown, maxChars = MAX_COMPACT_JWS_CHARS): DecodedJwt | undefined {
  if (typeof token !== 'string' || token.length > maxChars) return undefined;
  const m = COMPACT.exec(token);
  if (!m) return undefined;
  const header = objectOf(m[1]!, maxChars);
  const payload = objectOf(m[2]!, maxChars);
  if (header === undefined || payload === undefined) return undefined;
  const alg = header.alg === 'Ed25519' ? 'EdDSA' : header.alg;
  if (typeof alg !== 'string' || !(JWS_ALGORITHMS as readonly string[]).includes(alg)) return undefined;
  let signature: Uint8Array;
  try {
    signature = b64urlDecode(m[3]!);
  } catch {
    return undefined;
  }
  return { header, payload, alg: alg as JwsAlgorithm, signingInput: `${m[1]}.${m[2]}`, signature };
}

/** Signs `payload` as a compact JWS with `header` (its `alg` and `kid` from the signer). */
export async function signCompactJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  signer: JwsSigner,
): Promise<string> {
  const fullHeader = { ...header, alg: signer.alg, ...(signer.kid === undefined ? {} : { kid: signer.kid }) };
  const input = `${b64urlEncode(utf8(JSON.stringify(fullHeader)))}.${b64urlEncode(utf8(JSON.stringify(payload)))}`;
  return `${input}.${b64urlEncode(await signer.sign(utf8(input)))}`;
}

/** What kind of key a public JWK is, when it is one we verify with (no private part). */
export function describeJwk(jwk: unknown): KeyDescription | undefined {
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) return undefined;
  const k = jwk as Record<string, unknown>;
  if ('d' in k || 'p' in k || 'k' in k) return undefined;
  if (k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string') return { kty: 'OKP', crv: 'Ed25519' };
  if (k.kty === 'EC' && (k.crv === 'P-256' || k.crv === 'P-384') && typeof k.x === 'string' && typeof k.y === 'string')
    return { kty: 'EC', crv: k.crv };
  if (k.kty === 'RSA' && typeof k.n === 'string' && typeof k.e === 'string') {
    try {
      return { kty: 'RSA', bits: b64urlDecode(k.n).length * 8 };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Imports a public JWK to verify `alg` with, when the key fits `alg`; undefined otherwise. */
export async function importPublicJwk(jwk: unknown, alg: JwsAlgorithm): Promise<CryptoKey | undefined> {
  const description = describeJwk(jwk);
  if (description === undefined || !algorithmFitsKey(alg, description)) return undefined;
  const k = jwk as Record<string, string>;
  const publicPart: JsonWebKey =
    description.kty === 'OKP'
      ? { kty: 'OKP', crv: 'Ed25519', x: k.x! }
      : description.kty === 'EC'
        ? { kty: 'EC', crv: k.crv!, x: k.x!, y: k.y! }
        : { kty: 'RSA', n: k.n!, e: k.e! };
  try {
    return await crypto.subtle.importKey('jwk', publicPart, importParams(alg, publicPart.crv), false, ['verify']);
  } catch {
    return undefined;
  }
}

/** Whether a decoded JWS's signature verifies with `key`. */
export function verifyDecodedJwt(decoded: DecodedJwt, key: CryptoKey): Promise<boolean> {
  return verifySignature(decoded.alg, key, utf8(decoded.signingInput), decoded.signature);
}

/** An Ed25519 public key (32 bytes) as a JWK. */
export function ed25519Jwk(publicKey: Uint8Array): JsonWebKey {
  return { kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(publicKey) };
}
