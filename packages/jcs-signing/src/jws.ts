import { BoundedMap, parseStrictJson, SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { b64urlDecode, b64urlEncode, concatBytes, fromUtf8, utf8 } from './bytes.js';
import { didOf } from './did.js';
import { jcs } from './jcs.js';
import { type Signer, verifyEd25519 } from './keypair.js';
import type { KeyResolver } from './resolver.js';

/** The protected header of a WMP detached JWS (RFC 7797 unencoded payload, core §5.4). */
export interface DetachedJwsHeader {
  readonly alg: 'EdDSA' | 'Ed25519';
  readonly b64: false;
  readonly crit: readonly ['b64'];
  readonly kid?: string;
  readonly [extra: string]: unknown;
}

export type SignatureFailure = 'malformed' | 'header' | 'unknown_key' | 'signer_mismatch' | 'signature' | 'missing';

function fail(reason: SignatureFailure, extra?: Record<string, unknown>): never {
  throw new SignatureInvalidError({ reason, ...extra });
}

const MAX_HEADER_LENGTH = 4096;
const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;

/** Parsed headers by their base64url text: a peer signs many messages with one header. Bounded. */
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
  // Pin the shape: EdDSA only, unencoded payload, and `b64` the only critical parameter we
  // understand. A header without b64:false or without crit would sign a different input.
  if (h.alg !== 'EdDSA' && h.alg !== 'Ed25519') fail('header');
  if (h.b64 !== false) fail('header');
  if (!Array.isArray(h.crit) || h.crit.length !== 1 || h.crit[0] !== 'b64') fail('header');
  if ('kid' in h && typeof h.kid !== 'string') fail('header');
  const parsed = Object.freeze(h) as DetachedJwsHeader;
  headerCache.set(encoded, parsed);
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
  if (signature.length !== 64) fail('malformed');
  return { header, encodedHeader, signature };
}

/** RFC 7797 signing input: ASCII(base64url(header)) || '.' || payload (the payload is not encoded). */
function signingInput(encodedHeader: string, payload: Uint8Array): Uint8Array {
  return concatBytes(utf8(`${encodedHeader}.`), payload);
}

/** Encoded plain headers by kid: a relay signs every routed message with the same one. Bounded. */
const encodedHeaders = new BoundedMap<string, string>(MAX_CACHED_HEADERS);

function encodedHeaderOf(kid: string, extraHeader: Record<string, unknown>): string {
  const plain = Object.keys(extraHeader).length === 0;
  const cached = plain ? encodedHeaders.get(kid) : undefined;
  if (cached !== undefined) return cached;
  const encoded = b64urlEncode(utf8(jcs({ ...extraHeader, alg: 'EdDSA', b64: false, crit: ['b64'], kid })));
  if (plain) {
    encodedHeaders.set(kid, encoded);
  }
  return encoded;
}

/** Signs `payload` into a compact detached JWS `<header>..<signature>` with `b64:false`. */
export async function signDetached(
  payload: Uint8Array,
  signer: Signer,
  extraHeader: Record<string, unknown> = {},
): Promise<string> {
  const encodedHeader = encodedHeaderOf(signer.kid, extraHeader);
  const signature = await signer.sign(signingInput(encodedHeader, payload));
  return `${encodedHeader}..${b64urlEncode(signature)}`;
}

export interface VerifyDetachedOptions {
  /** The key to verify with, or a resolver that finds it from the header's `kid`. */
  readonly key: Uint8Array | KeyResolver;
  /** When set, the `kid` must belong to this identifier (sender binding): its DID part must equal it. */
  readonly signer?: string;
}

export interface VerifiedJws {
  readonly header: DetachedJwsHeader;
  readonly publicKey: Uint8Array;
}

/**
 * Verifies a compact detached JWS over `payload`. Throws `SignatureInvalidError` (-31010) with
 * `data.reason`: malformed, header, unknown_key, signer_mismatch or signature.
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
  if (options.key instanceof Uint8Array) publicKey = options.key;
  else if (header.kid !== undefined) publicKey = await options.key.resolve(header.kid);
  if (!publicKey) fail('unknown_key');
  if (!verifyEd25519(publicKey, signingInput(encodedHeader, payload), signature)) fail('signature');
  return { header, publicKey };
}
