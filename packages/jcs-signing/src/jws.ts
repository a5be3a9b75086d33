import { BoundedMap, parseStrictJson, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { b64urlDecode, b64urlEncode, concatBytes, fromUtf8, utf8 } from './bytes.js';
import { didOf } from './did.js';
import { jcs } from './jcs.js';
import { verifyEd25519, verifyP256 } from './keypair.js';
import type { KeyResolver } from './resolver.js';
import { type MessageSigner, parseX5cHeader, type X5cChainVerifier, type X5cLeafKey } from './x5c.js';

/** The protected header of a WMP detached JWS (RFC 7797 unencoded payload, core §5.4). */
export interface DetachedJwsHeader {
  readonly alg: 'EdDSA' | 'Ed25519' | 'ES256';
  readonly b64: false;
  readonly crit: readonly ['b64'];
  readonly kid?: string;
  /** The signer's certificate chain (standard base64 DER, leaf first), for X.509 identities. */
  readonly x5c?: readonly string[];
  readonly [extra: string]: unknown;
}

export type SignatureFailure =
  | 'malformed'
  | 'header'
  | 'unknown_key'
  | 'signer_mismatch'
  | 'signature'
  | 'missing'
  | 'untrusted_chain';

function fail(reason: SignatureFailure, extra?: Record<string, unknown>): never {
  throw new SignatureInvalidError({ reason, ...extra });
}

/** Header text beyond this is refused; an `x5c` of a few certificates fits. */
const MAX_HEADER_LENGTH = 16 * 1024;
/** Headers up to this length are cached (a peer signs many messages with one header). */
const MAX_CACHED_HEADER_LENGTH = 4096;
const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;
const ALGORITHMS: ReadonlySet<unknown> = new Set(['EdDSA', 'Ed25519', 'ES256']);

/** Parsed headers by their base64url text. Bounded. */
const MAX_CACHED_HEADERS = 1024;
const headerCache = new BoundedMap<string, DetachedJwsHeader>(MAX_CACHED_HEADERS);

function parseHeader(encoded: string): DetachedJwsHeader {
  const cached = headerCache.get(encoded);
  if (cached) return cached;
  if (encoded.length > MAX_HEADER_LENGTH) fail('header');
  let header: unknown;
  try {
    header = parseStrictJson(fromUtf8(b64urlDecode(encoded)), { maxBytes: MAX_HEADER_LENGTH, maxDepth: 4 });
  } catch {
    fail('header');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('header');
  const h = header as Record<string, unknown>;
  // Pin the shape: EdDSA or ES256, unencoded payload, and `b64` the only critical parameter we
  // understand. A header without b64:false or without crit would sign a different input.
  if (!ALGORITHMS.has(h.alg)) fail('header');
  if (h.b64 !== false) fail('header');
  if (!Array.isArray(h.crit) || h.crit.length !== 1 || h.crit[0] !== 'b64') fail('header');
  if ('kid' in h && typeof h.kid !== 'string') fail('header');
  if ('x5c' in h && parseX5cHeader(h.x5c) === undefined) fail('header');
  // An ES256 key can only come from a certificate: there is no resolver of P-256 kids.
  if (h.alg === 'ES256' && !('x5c' in h)) fail('header');
  const parsed = Object.freeze(h) as DetachedJwsHeader;
  if (encoded.length <= MAX_CACHED_HEADER_LENGTH) headerCache.set(encoded, parsed);
  return parsed;
}

/** Splits `<header>..<signature>` and checks the header; throws -31010 when either is malformed. */
export function decodeDetachedJws(jws: string): {
  header: DetachedJwsHeader;
  encodedHeader: string;
  signature: Uint8Array;
} {
  const m = typeof jws === 'string' ? DETACHED.exec(jws) : null;
  if (!m) fail('malformed');
  const encodedHeader = m[1]!;
  const header = parseHeader(encodedHeader);
  let signature: Uint8Array;
  try {
    signature = b64urlDecode(m[2]!);
  } catch {
    fail('malformed');
  }
  // EdDSA and ES256 (r || s) signatures are both 64 bytes.
  if (signature.length !== 64) fail('malformed');
  return { header, encodedHeader, signature };
}

/** RFC 7797 signing input: ASCII(base64url(header)) || '.' || payload (the payload is not encoded). */
function signingInput(encodedHeader: string, payload: Uint8Array): Uint8Array {
  return concatBytes(utf8(`${encodedHeader}.`), payload);
}

/** Encoded plain headers by kid: a relay signs every routed message with the same one. Bounded. */
const encodedHeaders = new BoundedMap<string, string>(MAX_CACHED_HEADERS);

function encodedHeaderOf(signer: MessageSigner, extraHeader: Record<string, unknown>): string {
  if ('x5c' in signer) {
    const header = {
      ...extraHeader,
      alg: signer.alg,
      b64: false,
      crit: ['b64'],
      kid: signer.kid,
      x5c: [...signer.x5c],
    };
    return b64urlEncode(utf8(jcs(header)));
  }
  const kid = signer.kid;
  const plain = Object.keys(extraHeader).length === 0;
  const cached = plain ? encodedHeaders.get(kid) : undefined;
  if (cached !== undefined) return cached;
  const encoded = b64urlEncode(utf8(jcs({ ...extraHeader, alg: 'EdDSA', b64: false, crit: ['b64'], kid })));
  if (plain) {
    encodedHeaders.set(kid, encoded);
  }
  return encoded;
}

/**
 * Signs `payload` into a compact detached JWS `<header>..<signature>` with `b64:false`: EdDSA with
 * an Ed25519 `Signer`, or the `alg` and `x5c` of an `X5cSigner` (an X.509 identity).
 */
export async function signDetached(
  payload: Uint8Array,
  signer: MessageSigner,
  extraHeader: Record<string, unknown> = {},
): Promise<string> {
  const encodedHeader = encodedHeaderOf(signer, extraHeader);
  const signature = await signer.sign(signingInput(encodedHeader, payload));
  return `${encodedHeader}..${b64urlEncode(signature)}`;
}

export interface VerifyDetachedOptions {
  /** The Ed25519 key to verify with, or a resolver that finds it from the header's `kid`. */
  readonly key: Uint8Array | KeyResolver;
  /** When set, the `kid` must belong to this identifier (sender binding): its DID part must equal it. */
  readonly signer?: string;
  /**
   * Checks the certificate chain of a header's `x5c` (`x5cSignatureVerifier` of
   * `@wmp/session/x509`, with the trust anchors). Without it, a signature with `x5c` is refused
   * (`untrusted_chain`, detail `no_trust_anchors`).
   */
  readonly x5c?: X5cChainVerifier;
}

export interface VerifiedJws {
  readonly header: DetachedJwsHeader;
  /** The key that verified: Ed25519 (32 bytes) or an uncompressed P-256 point (65 bytes). */
  readonly publicKey: Uint8Array;
}

/** The `detail` of a chain verifier's refusal: its own `data.detail` or `data.reason`, if it says. */
function chainDetail(e: unknown): Record<string, unknown> {
  const data = (e as { data?: unknown } | null)?.data;
  if (data === null || typeof data !== 'object') return {};
  const { reason, detail } = data as { reason?: unknown; detail?: unknown };
  const said = typeof detail === 'string' ? detail : typeof reason === 'string' ? reason : undefined;
  return said === undefined ? {} : { detail: said };
}

async function leafKey(header: DetachedJwsHeader, identifier: string, verifier: X5cChainVerifier | undefined) {
  if (!verifier) fail('untrusted_chain', { detail: 'no_trust_anchors' });
  let leaf: X5cLeafKey;
  try {
    leaf = await verifier.verify(header.x5c!, identifier);
  } catch (e) {
    fail('untrusted_chain', chainDetail(e));
  }
  // The header's alg must be the one the leaf's key signs with (an Ed25519 leaf cannot claim ES256).
  const alg = header.alg === 'Ed25519' ? 'EdDSA' : header.alg;
  if (leaf.alg !== alg) fail('header');
  return leaf.publicKey;
}

/**
 * Verifies a compact detached JWS over `payload`. Throws `SignatureInvalidError` (-31010) with
 * `data.reason`: malformed, header, unknown_key, signer_mismatch, untrusted_chain or signature.
 */
export async function verifyDetached(
  jws: string,
  payload: Uint8Array,
  options: VerifyDetachedOptions,
): Promise<VerifiedJws> {
  const { header, encodedHeader, signature } = decodeDetachedJws(jws);
  if (options.signer !== undefined && (header.kid === undefined || didOf(header.kid) !== options.signer)) {
    fail('signer_mismatch');
  }
  let publicKey: Uint8Array | undefined;
  if (header.x5c !== undefined && !(options.key instanceof Uint8Array)) {
    // The identity is the kid's identifier part; the certificate must prove it.
    if (header.kid === undefined) fail('unknown_key');
    publicKey = await leafKey(header, didOf(header.kid), options.x5c);
  } else if (header.alg === 'ES256') {
    fail('unknown_key');
  } else if (options.key instanceof Uint8Array) {
    publicKey = options.key;
  } else if (header.kid !== undefined) {
    publicKey = await options.key.resolve(header.kid);
  }
  if (!publicKey) fail('unknown_key');
  const input = signingInput(encodedHeader, payload);
  const ok =
    header.alg === 'ES256' ? verifyP256(publicKey, input, signature) : verifyEd25519(publicKey, input, signature);
  if (!ok) fail('signature');
  return { header, publicKey };
}
