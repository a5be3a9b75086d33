import {
  b64urlEncode,
  type ReplayCache,
  replayCacheRefusalReason,
  timingSafeEqualString,
  utf8,
} from '@wmp/jcs-signing';
import { NotAuthorizedError, RateLimitedError } from '@wmp/jsonrpc-envelope';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, type JWK, jwtVerify } from 'jose';
import type { Authenticator } from './authenticator.js';
import { type BearerOptions, boundThumbprint, verifyAccessToken } from './bearer.js';
import { JWS_ALGORITHMS } from './jws.js';
import { authFailure } from './reasons.js';

/**
 * DPoP (RFC 9449) for WMP: `auth: {type: 'dpop', token, proof}` (wmp-tables §5.1). WMP has no
 * HTTP request per call, so the proof is bound to session creation: `htm` is `POST` and `htu` the
 * responder's endpoint URL (what the initiator connected to, without query or fragment).
 */
export interface DpopProofOptions {
  /**
   * The responder's endpoint URL(s) a proof may name, e.g. `wss://relay.example/wmp`; a function
   * when they are known only later (a server listening on a port it is given).
   */
  readonly htu: string | readonly string[] | (() => readonly string[]);
  /** Default `POST`. */
  readonly htm?: string;
  /** Where proof `jti`s are recorded, single use. */
  readonly replayCache: ReplayCache;
  /** Proof algorithms, default ES256, ES384, EdDSA, PS256, RS256 (asymmetric only). */
  readonly proofAlgorithms?: readonly string[];
  /** How old a proof's `iat` may be, default 60 s. */
  readonly proofMaxAgeSeconds?: number;
  /** Clock skew allowed on `iat`, default 30 s. */
  readonly skewSeconds?: number;
}

export interface DpopOptions extends BearerOptions, DpopProofOptions {}

const MAX_JTI_CHARS = 256;
const MAX_PROOF_CHARS = 8192;
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** `scheme://host[:port]/path` of a URL: RFC 9449 §4.3 compares `htu` without query and fragment. */
function htuOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3) for an access token: `typ` dpop+jwt, an allowed asymmetric
 * `alg`, a public `jwk` in the header that verifies the signature, `htm` and `htu`, `iat` within
 * the window, `ath` the token's hash, the key's RFC 7638 thumbprint equal to `jkt`, and, last,
 * `jti` unused. Throws -31002 `dpop_invalid` / `dpop_replay` (or `unsupported_algorithm`); a
 * replay cache that refuses is -31007 `replay_cache_full`, or `replay_cache_unavailable` when its
 * backend does not answer.
 */
export async function verifyDpopProof(
  proof: unknown,
  input: { readonly accessToken: string; readonly jkt: string; readonly now: number },
  options: DpopProofOptions,
): Promise<void> {
  if (typeof proof !== 'string' || proof.length > MAX_PROOF_CHARS) throw authFailure('dpop_invalid', 'proof_required');
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw authFailure('dpop_invalid', 'malformed');
  }
  if (header.typ !== 'dpop+jwt') throw authFailure('dpop_invalid', 'typ');
  const algorithms = options.proofAlgorithms ?? JWS_ALGORITHMS;
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) throw authFailure('unsupported_algorithm');
  const jwk = header.jwk as JWK | undefined;
  if (jwk === null || typeof jwk !== 'object' || PRIVATE_JWK_MEMBERS.some((m) => m in jwk)) {
    throw authFailure('dpop_invalid', 'jwk');
  }
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...algorithms],
      currentDate: new Date(input.now),
    }));
  } catch {
    throw authFailure('dpop_invalid', 'signature');
  }
  if (claims.htm !== (options.htm ?? 'POST')) throw authFailure('dpop_invalid', 'htm');
  const configured = typeof options.htu === 'function' ? options.htu() : options.htu;
  const allowed = (typeof configured === 'string' ? [configured] : configured).map(htuOf);
  const htu = typeof claims.htu === 'string' ? htuOf(claims.htu) : undefined;
  if (htu === undefined || !allowed.includes(htu)) throw authFailure('dpop_invalid', 'htu');
  const skew = (options.skewSeconds ?? 30) * 1000;
  const maxAge = (options.proofMaxAgeSeconds ?? 60) * 1000;
  const iat = typeof claims.iat === 'number' ? claims.iat * 1000 : Number.NaN;
  if (!(iat >= input.now - maxAge - skew && iat <= input.now + skew)) throw authFailure('dpop_invalid', 'iat');
  const ath = b64urlEncode(
    new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(input.accessToken) as Uint8Array<ArrayBuffer>)),
  );
  if (typeof claims.ath !== 'string' || !timingSafeEqualString(claims.ath, ath))
    throw authFailure('dpop_invalid', 'ath');
  let thumbprint: string;
  try {
    thumbprint = await calculateJwkThumbprint(jwk, 'sha256');
  } catch {
    throw authFailure('dpop_invalid', 'jwk');
  }
  if (!timingSafeEqualString(thumbprint, input.jkt)) throw authFailure('dpop_invalid', 'jkt_mismatch');
  const jti = claims.jti;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_CHARS)
    throw authFailure('dpop_invalid', 'jti');
  let fresh: boolean;
  try {
    fresh = await options.replayCache.useOnce(`dpop:${thumbprint}:${jti}`, iat + maxAge + skew);
  } catch (e) {
    // Full or down, the jti cannot be recorded: refuse, and say which (the proof itself was fine).
    const reason = replayCacheRefusalReason(e);
    if (reason !== undefined) throw new RateLimitedError({ reason });
    throw e;
  }
  if (!fresh) throw authFailure('dpop_replay');
}

/**
 * `dpop` (RFC 9449 with WMP's binding above): a DPoP-bound access token (`cnf.jkt`) checked as a
 * bearer token, and its proof. Inline at create; the identity is the token's `sub`.
 */
export function dpopAuthenticator(options: DpopOptions): Authenticator {
  return {
    needsChallenge: false,
    ...(options.schemes ? { schemes: options.schemes } : {}),
    async authenticate({ auth, sender, now }) {
      const payload = await verifyAccessToken(auth.token, options, now);
      const jkt = boundThumbprint(payload);
      if (jkt === undefined) throw authFailure('dpop_invalid', 'token_not_bound');
      await verifyDpopProof(auth.proof, { accessToken: auth.token as string, jkt, now }, options);
      const sub = payload.sub!;
      if (sender !== undefined && sender !== sub)
        throw new NotAuthorizedError({ reason: 'token subject is not the sender' });
      return sub;
    },
  };
}
