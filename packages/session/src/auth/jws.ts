import { b64urlDecode, b64urlEncode, concatBytes, fromUtf8, jcs, utf8 } from '@wmp/jcs-signing';
import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { authFailure } from './reasons.js';

/**
 * Detached JWS (RFC 7797, `b64: false`, the framing of core §5.4) with any key WebCrypto holds,
 * so x5c chains and did:web documents may use P-256, P-384 and RSA keys as well as Ed25519.
 * Browser-safe: only `globalThis.crypto.subtle`. (The Ed25519-only fast path of did:key stays in
 * @wmp/jcs-signing.)
 */
export type JwsAlgorithm = 'EdDSA' | 'ES256' | 'ES384' | 'PS256' | 'RS256';

export const JWS_ALGORITHMS: readonly JwsAlgorithm[] = ['ES256', 'ES384', 'EdDSA', 'PS256', 'RS256'];

/** Signs a JWS signing input with some key: `sign` returns the JWS signature bytes (ECDSA: r||s). */
export interface JwsSigner {
  readonly alg: JwsAlgorithm;
  /** Put in the header when set. */
  readonly kid?: string;
  sign(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

export interface DecodedJws {
  readonly alg: JwsAlgorithm;
  readonly kid: string | undefined;
  readonly header: Readonly<Record<string, unknown>>;
  readonly encodedHeader: string;
  readonly signature: Uint8Array;
}

const MAX_HEADER_CHARS = 8192;
const MAX_SIGNATURE_CHARS = 1400; // an RSA-8192 signature is 1366 base64url characters
const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;

/**
 * Splits `<header>..<signature>` and checks the header: `b64: false`, `crit` exactly `["b64"]`,
 * an `alg` we verify. A malformed JWS is `bad_signature`, another `alg` is `unsupported_algorithm`.
 */
export function decodeJws(jws: unknown, algorithms: readonly JwsAlgorithm[] = JWS_ALGORITHMS): DecodedJws {
  if (typeof jws !== 'string' || jws.length > MAX_HEADER_CHARS + MAX_SIGNATURE_CHARS + 2) {
    throw authFailure('bad_signature', 'malformed');
  }
  const m = DETACHED.exec(jws);
  if (!m || m[1]!.length > MAX_HEADER_CHARS || m[2]!.length > MAX_SIGNATURE_CHARS) {
    throw authFailure('bad_signature', 'malformed');
  }
  let header: unknown;
  let signature: Uint8Array;
  try {
    header = parseStrictJson(fromUtf8(b64urlDecode(m[1]!)), { maxBytes: MAX_HEADER_CHARS, maxDepth: 4 });
    signature = b64urlDecode(m[2]!);
  } catch {
    throw authFailure('bad_signature', 'malformed');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw authFailure('bad_signature', 'malformed');
  }
  const h = header as Record<string, unknown>;
  if (h.b64 !== false || !Array.isArray(h.crit) || h.crit.length !== 1 || h.crit[0] !== 'b64') {
    throw authFailure('bad_signature', 'header');
  }
  if ('kid' in h && typeof h.kid !== 'string') throw authFailure('bad_signature', 'header');
  const alg = h.alg === 'Ed25519' ? 'EdDSA' : h.alg;
  if (typeof alg !== 'string' || !(algorithms as readonly string[]).includes(alg)) {
    throw authFailure('unsupported_algorithm');
  }
  return {
    alg: alg as JwsAlgorithm,
    kid: h.kid as string | undefined,
    header: h,
    encodedHeader: m[1]!,
    signature,
  };
}

/** RFC 7797 signing input: ASCII(header) || '.' || payload. */
export function signingInput(encodedHeader: string, payload: Uint8Array): Uint8Array {
  return concatBytes(utf8(`${encodedHeader}.`), payload);
}

/** WebCrypto's import parameters for a verification key of `alg`. */
export function importParams(
  alg: JwsAlgorithm,
  curve?: string,
): AlgorithmIdentifier | RsaHashedImportParams | EcKeyImportParams {
  switch (alg) {
    case 'EdDSA':
      return { name: 'Ed25519' };
    case 'ES256':
      return { name: 'ECDSA', namedCurve: curve ?? 'P-256' };
    case 'ES384':
      return { name: 'ECDSA', namedCurve: curve ?? 'P-384' };
    case 'PS256':
      return { name: 'RSA-PSS', hash: 'SHA-256' };
    case 'RS256':
      return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  }
}

/** WebCrypto's sign / verify parameters for `alg` (PS256: salt of the hash length, RFC 7518 §3.5). */
function operationParams(alg: JwsAlgorithm): AlgorithmIdentifier | EcdsaParams | RsaPssParams {
  switch (alg) {
    case 'EdDSA':
      return { name: 'Ed25519' };
    case 'ES256':
      return { name: 'ECDSA', hash: 'SHA-256' };
    case 'ES384':
      return { name: 'ECDSA', hash: 'SHA-384' };
    case 'PS256':
      return { name: 'RSA-PSS', saltLength: 32 };
    case 'RS256':
      return { name: 'RSASSA-PKCS1-v1_5' };
  }
}

/**
 * The algorithm a WebCrypto key may sign with under `alg`: the key's own type and curve must be
 * the one `alg` names (an RSA key signs PS256 or RS256, a P-256 key ES256 only, and so on).
 */
export function algorithmFitsKey(alg: JwsAlgorithm, key: KeyDescription): boolean {
  switch (alg) {
    case 'EdDSA':
      return key.kty === 'OKP' && key.crv === 'Ed25519';
    case 'ES256':
      return key.kty === 'EC' && key.crv === 'P-256';
    case 'ES384':
      return key.kty === 'EC' && key.crv === 'P-384';
    case 'PS256':
    case 'RS256':
      // 2048 bits at least; at most 8192, so that one verification stays cheap.
      return key.kty === 'RSA' && (key.bits ?? 0) >= 2048 && (key.bits ?? 0) <= 8192;
  }
}

/** What kind of key a public key is, in JWK terms. */
export interface KeyDescription {
  readonly kty: 'OKP' | 'EC' | 'RSA';
  readonly crv?: 'Ed25519' | 'P-256' | 'P-384';
  /** RSA modulus length. */
  readonly bits?: number;
}

/** Imports a public key (`spki` DER or a public JWK) to verify `alg` with; throws on a bad key. */
export async function importVerifyKey(
  alg: JwsAlgorithm,
  format: 'spki' | 'jwk',
  data: Uint8Array | JsonWebKey,
): Promise<CryptoKey> {
  const params = importParams(alg);
  return format === 'jwk'
    ? crypto.subtle.importKey('jwk', data as JsonWebKey, params, false, ['verify'])
    : crypto.subtle.importKey('spki', data as Uint8Array<ArrayBuffer>, params, false, ['verify']);
}

/** Whether `signature` (JWS form: ECDSA r||s) over `data` verifies with `key` under `alg`; never throws. */
export async function verifySignature(
  alg: JwsAlgorithm,
  key: CryptoKey,
  data: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  try {
    return await crypto.subtle.verify(
      operationParams(alg),
      key,
      signature as Uint8Array<ArrayBuffer>,
      data as Uint8Array<ArrayBuffer>,
    );
  } catch {
    return false;
  }
}

/** Verifies a decoded detached JWS over `payload` with `key`; `bad_signature` when it does not. */
export async function verifyDecodedJws(decoded: DecodedJws, payload: Uint8Array, key: CryptoKey): Promise<void> {
  const ok = await verifySignature(decoded.alg, key, signingInput(decoded.encodedHeader, payload), decoded.signature);
  if (!ok) throw authFailure('bad_signature');
}

/** Signs `payload` into `<header>..<signature>` (`b64: false`), the header written as JCS. */
export async function signJws(
  payload: Uint8Array,
  signer: JwsSigner,
  extraHeader: Record<string, unknown> = {},
): Promise<string> {
  const header = {
    ...extraHeader,
    alg: signer.alg,
    b64: false,
    crit: ['b64'],
    ...(signer.kid === undefined ? {} : { kid: signer.kid }),
  };
  const encodedHeader = b64urlEncode(utf8(jcs(header)));
  const signature = await signer.sign(signingInput(encodedHeader, payload));
  return `${encodedHeader}..${b64urlEncode(signature)}`;
}

/** A JwsSigner over a WebCrypto private key (imported non-extractable by the caller). */
export function webCryptoSigner(privateKey: CryptoKey, alg: JwsAlgorithm, kid?: string): JwsSigner {
  const params = operationParams(alg);
  return {
    alg,
    ...(kid === undefined ? {} : { kid }),
    async sign(data) {
      return new Uint8Array(await crypto.subtle.sign(params, privateKey, data as Uint8Array<ArrayBuffer>));
    },
  };
}
