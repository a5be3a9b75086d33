// Delegation mandates (core §3.3, wmp-tables §2.2): a principal's signed statement that a delegate
// may act for it, carried in `wmp.sender_delegate.authorization.credential`. A compact JWS (not
// detached: the mandate travels on its own), EdDSA or ES256 with `x5c`, whose payload is the JCS
// of `{delegate, principal, scope, valid_until}` and whose `kid` names a key of the principal.
import { DelegationInvalidError, parseStrictJson } from '@wmp/jsonrpc-envelope';
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from './bytes.js';
import { didOf } from './did.js';
import { jcs } from './jcs.js';
import { verifyEd25519, verifyP256 } from './keypair.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';
import { type MessageSigner, parseX5cHeader, type X5cChainVerifier } from './x5c.js';

/** The `typ` of a mandate's header: a JWS of P's made for something else is no mandate. */
export const MANDATE_TYPE = 'wmp-mandate+jws';

/** Why a mandate was refused: the `data.reason` of -31015. */
export type MandateFailure = 'malformed' | 'unknown_key' | 'principal_mismatch' | 'untrusted_chain' | 'bad_signature';

/** What a mandate says, as signed. */
export interface MandateClaims {
  readonly delegate: string;
  readonly principal: string;
  /** The actions the delegate may take for the principal (`submit`, `retrieve`). */
  readonly scope: readonly string[];
  /** RFC 3339. */
  readonly valid_until: string;
}

/** A verified mandate: its claims, the expiry as ms, and the key's id. */
export interface VerifiedMandate extends MandateClaims {
  readonly validUntil: number;
  readonly kid: string;
  readonly alg: 'EdDSA' | 'ES256';
}

export interface VerifyMandateOptions {
  /** Ed25519 keys by kid; default did:key and did:jwk. */
  readonly resolver?: KeyResolver;
  /** The chain check of an `x5c` header (an X.509 principal); without it such mandates are `untrusted_chain`. */
  readonly x5c?: X5cChainVerifier;
}

const MAX_MANDATE_CHARS = 32 * 1024;
const MAX_SCOPE = 16;
const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const CLAIMS = ['delegate', 'principal', 'scope', 'valid_until'];

function fail(reason: MandateFailure): never {
  throw new DelegationInvalidError({ reason });
}

function parsePart(encoded: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseStrictJson(fromUtf8(b64urlDecode(encoded)), { maxBytes: MAX_MANDATE_CHARS, maxDepth: 4 });
  } catch {
    fail('malformed');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('malformed');
  return value as Record<string, unknown>;
}

/** The claims when `payload` is exactly them, canonical (JCS): the text signed is the one read. */
function claimsOf(encoded: string): MandateClaims {
  const payload = parsePart(encoded);
  const keys = Object.keys(payload);
  if (keys.length !== CLAIMS.length || !CLAIMS.every((k) => keys.includes(k))) fail('malformed');
  const { delegate, principal, scope, valid_until } = payload;
  const strings = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= 2048;
  if (!strings(delegate) || !strings(principal) || typeof valid_until !== 'string' || !RFC3339.test(valid_until)) {
    fail('malformed');
  }
  if (!Array.isArray(scope) || scope.length === 0 || scope.length > MAX_SCOPE || !scope.every(strings)) {
    fail('malformed');
  }
  if (Number.isNaN(Date.parse(valid_until)) || fromUtf8(b64urlDecode(encoded)) !== jcs(payload)) fail('malformed');
  return { delegate, principal, scope, valid_until };
}

/**
 * Signs a mandate as `principal` (its Ed25519 `Signer`, or the `X5cSigner` of an X.509
 * principal): the compact JWS `authorization.credential` carries.
 */
export async function signMandate(claims: MandateClaims, signer: MessageSigner): Promise<string> {
  const header =
    'x5c' in signer
      ? { alg: signer.alg, kid: signer.kid, typ: MANDATE_TYPE, x5c: [...signer.x5c] }
      : { alg: 'EdDSA', kid: signer.kid, typ: MANDATE_TYPE };
  const { delegate, principal, scope, valid_until } = claims;
  const encodedHeader = b64urlEncode(utf8(jcs(header)));
  const encodedPayload = b64urlEncode(utf8(jcs({ delegate, principal, scope, valid_until })));
  const input = `${encodedHeader}.${encodedPayload}`;
  return `${input}.${b64urlEncode(await signer.sign(utf8(input)))}`;
}

/**
 * Verifies a mandate's signature by a key of its `principal` (the `kid`'s identifier part must be
 * the principal; an `x5c` leaf must prove it). Throws `DelegationInvalidError` (-31015) with
 * `data.reason`. Who the delegate is, the action and the expiry are the caller's to check.
 */
export async function verifyMandate(jws: unknown, options: VerifyMandateOptions = {}): Promise<VerifiedMandate> {
  const m = typeof jws === 'string' && jws.length <= MAX_MANDATE_CHARS ? COMPACT.exec(jws) : null;
  if (!m) fail('malformed');
  const header = parsePart(m[1]!);
  const { alg, kid, typ } = header;
  if ((alg !== 'EdDSA' && alg !== 'ES256') || typeof kid !== 'string' || typ !== MANDATE_TYPE) fail('malformed');
  const x5c = header.x5c === undefined ? undefined : parseX5cHeader(header.x5c);
  if (header.x5c !== undefined && x5c === undefined) fail('malformed');
  // An ES256 key comes only from a certificate (there is no resolver of P-256 kids).
  if (alg === 'ES256' && x5c === undefined) fail('malformed');
  const claims = claimsOf(m[2]!);
  let owner: string;
  try {
    owner = didOf(kid);
  } catch {
    fail('malformed');
  }
  if (owner !== claims.principal) fail('principal_mismatch');
  let signature: Uint8Array;
  try {
    signature = b64urlDecode(m[3]!);
  } catch {
    fail('malformed');
  }
  if (signature.length !== 64) fail('malformed');
  let publicKey: Uint8Array | undefined;
  if (x5c !== undefined) {
    if (options.x5c === undefined) fail('untrusted_chain');
    try {
      const leaf = await options.x5c.verify(x5c, owner);
      if (leaf.alg !== alg) fail('malformed');
      publicKey = leaf.publicKey;
    } catch (e) {
      if (e instanceof DelegationInvalidError) throw e;
      fail('untrusted_chain');
    }
  } else {
    publicKey = await (options.resolver ?? didKeyResolver).resolve(kid);
  }
  if (publicKey === undefined) fail('unknown_key');
  const input = utf8(`${m[1]}.${m[2]}`);
  const ok = alg === 'ES256' ? verifyP256(publicKey, input, signature) : verifyEd25519(publicKey, input, signature);
  if (!ok) fail('bad_signature');
  return { ...claims, validUntil: Date.parse(claims.valid_until), kid, alg };
}
