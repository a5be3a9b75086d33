import {
  b64urlDecode,
  b64urlEncode,
  decodeEd25519Multikey,
  encodeEd25519Multikey,
  fromUtf8,
  jcs,
  randomBytes,
  type Signer,
  utf8,
  verifyEd25519,
} from '@wmp/jcs-signing';
import { parseStrictJson, rfc3339 } from '@wmp/jsonrpc-envelope';
import { backend } from '#crypto';
import { parseUtcTime } from './encoding.js';
import type { NonceCache } from './nonces.js';
import { NONCE_TTL_SECONDS, OHAN_SKEW_SECONDS } from './profile.js';

export const REQUEST_AUTH_SCHEME = 'OHAN-Sig';

/** What the `Authorization: OHAN-Sig` header signs (docs/ohan-profile.md, "Signed requests"). */
export interface RequestClaims {
  /** The caller's Ed25519 Multikey. */
  readonly key: string;
  /** The box's public origin, `https://host[:port]`. */
  readonly origin: string;
  readonly method: string;
  /** Path and query. */
  readonly target: string;
  /** b64url(SHA-256(raw body)); of the empty string for GET. */
  readonly body: string;
  /** >= 128 random bits, b64url. */
  readonly nonce: string;
  readonly ts: string;
}

export type RequestBody = Uint8Array | string | undefined;

function bodyHash(body: RequestBody): string {
  const bytes = body === undefined ? new Uint8Array(0) : typeof body === 'string' ? utf8(body) : body;
  return b64urlEncode(backend.sha256(bytes));
}

export interface SignRequestInput {
  readonly signer: Signer;
  readonly origin: string;
  readonly method: string;
  readonly target: string;
  readonly body?: RequestBody;
  /** Defaults: 128 fresh random bits, and now. */
  readonly nonce?: string;
  readonly ts?: Date | string;
}

/** The `Authorization` header value for a box request: `OHAN-Sig <claims>.<signature>`. */
export async function signRequest(input: SignRequestInput): Promise<string> {
  const claims: RequestClaims = {
    key: encodeEd25519Multikey(input.signer.publicKey),
    origin: input.origin,
    method: input.method.toUpperCase(),
    target: input.target,
    body: bodyHash(input.body),
    nonce: input.nonce ?? b64urlEncode(randomBytes(16)),
    ts: typeof input.ts === 'string' ? input.ts : rfc3339((input.ts ?? new Date()).getTime()),
  };
  const text = jcs(claims);
  const signature = await input.signer.sign(utf8(text));
  return `${REQUEST_AUTH_SCHEME} ${b64urlEncode(utf8(text))}.${b64urlEncode(signature)}`;
}

export type RequestFailure =
  | 'malformed'
  | 'key'
  | 'origin'
  | 'method'
  | 'target'
  | 'body'
  | 'stale'
  | 'signature'
  | 'replay'
  | 'rate_limited';

export type RequestVerdict =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly reason: RequestFailure };

export interface VerifyRequestInput {
  /** This box's configured public origin. */
  readonly origin: string;
  readonly method: string;
  readonly target: string;
  readonly body?: RequestBody;
  /** The box's clock in ms (default: now). */
  readonly now?: number;
  readonly nonces: NonceCache;
  readonly skewSeconds?: number;
  /**
   * Decides, once the signature holds and before the nonce is recorded, whether this key may go on
   * (its rate limit): a refused request leaves no nonce behind, so a flood cannot fill the cache.
   */
  readonly admit?: (key: string) => boolean | Promise<boolean>;
  /**
   * Whether the nonce of an admitted request of `key` must be checked and remembered (default:
   * always). A box answers false for a key it holds nothing of, on calls that change nothing
   * then: such a request, replayed, has no effect to repeat, so it takes no room in the cache.
   */
  readonly remember?: (key: string) => boolean | Promise<boolean>;
  /** Where the request came from (the box's host says; an address), counted against its share of the cache. */
  readonly source?: string;
}

const MAX_HEADER_LENGTH = 4096;
const CLAIM_KEYS = ['body', 'key', 'method', 'nonce', 'origin', 'target', 'ts'];
const NONCE = /^[A-Za-z0-9_-]{22,86}$/;

function decodeClaims(encoded: string): RequestClaims | undefined {
  try {
    const value = parseStrictJson(fromUtf8(b64urlDecode(encoded)), { maxBytes: MAX_HEADER_LENGTH, maxDepth: 1 });
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const keys = Object.keys(value).sort();
    if (keys.length !== CLAIM_KEYS.length || keys.some((k, i) => k !== CLAIM_KEYS[i])) return undefined;
    if (Object.values(value).some((v) => typeof v !== 'string')) return undefined;
    return value as RequestClaims;
  } catch {
    return undefined;
  }
}

/**
 * Checks an `Authorization: OHAN-Sig` header against the request the box received. The nonce is
 * recorded only once everything else holds, so refused requests cannot fill the cache.
 */
export async function verifyRequest(
  header: string | null | undefined,
  input: VerifyRequestInput,
): Promise<RequestVerdict> {
  const fail = (reason: RequestFailure): RequestVerdict => ({ ok: false, reason });
  if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return fail('malformed');
  const m = /^OHAN-Sig ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(header);
  if (!m) return fail('malformed');
  const claims = decodeClaims(m[1]!);
  if (!claims) return fail('malformed');
  let signature: Uint8Array;
  try {
    signature = b64urlDecode(m[2]!);
  } catch {
    return fail('malformed');
  }
  let publicKey: Uint8Array;
  try {
    publicKey = decodeEd25519Multikey(claims.key);
  } catch {
    return fail('key');
  }
  if (claims.origin !== input.origin) return fail('origin');
  if (claims.method !== input.method.toUpperCase()) return fail('method');
  if (claims.target !== input.target) return fail('target');
  if (claims.body !== bodyHash(input.body)) return fail('body');
  if (!NONCE.test(claims.nonce) || b64urlDecodeLength(claims.nonce) < 16) return fail('malformed');
  const ts = parseUtcTime(claims.ts);
  const now = input.now ?? Date.now();
  const skew = (input.skewSeconds ?? OHAN_SKEW_SECONDS) * 1000;
  if (ts === undefined || Math.abs(now - ts) > skew) return fail('stale');
  // The signed bytes are the transmitted claims text: verifying them (not a re-serialisation)
  // and requiring it to be canonical means one request has one valid header.
  const text = fromUtf8(b64urlDecode(m[1]!));
  if (text !== jcs(claims)) return fail('malformed');
  if (signature.length !== 64 || !verifyEd25519(publicKey, utf8(text), signature)) return fail('signature');
  if (input.admit && !(await input.admit(claims.key))) return fail('rate_limited');
  if (input.remember && !(await input.remember(claims.key))) return { ok: true, key: claims.key };
  // A nonce is single use per signer, for as long as a request could be fresh. May throw
  // ReplayCacheFullError (NonceCacheFullError): the caller cannot tell a replay, so it must refuse.
  const scope = input.source === undefined ? { key: claims.key } : { key: claims.key, source: input.source };
  const fresh = await input.nonces.useOnce(`${claims.key} ${claims.nonce}`, now + NONCE_TTL_SECONDS * 1000, scope);
  if (!fresh) return fail('replay');
  return { ok: true, key: claims.key };
}

function b64urlDecodeLength(text: string): number {
  return Math.floor((text.length * 3) / 4);
}
