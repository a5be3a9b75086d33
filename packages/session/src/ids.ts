import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `prefix` + 22 alphanumerics from 16 random bytes (>= 128 bits): matches `^ses-[A-Za-z0-9]+$`. */
function alnumId(prefix: string): string {
  // 22 base-62 digits hold more than 2^128; each digit comes from a fresh random byte by rejection.
  let out = prefix;
  while (out.length < prefix.length + 22) {
    for (const b of randomBytes(32)) {
      if (b < 248 && out.length < prefix.length + 22) out += ALNUM[b % 62];
    }
  }
  return out;
}

/** A session id: only the server makes them (docs/wmp-profile.md, "Sessions and identities"). */
export function newSessionId(): string {
  return alnumId('ses-');
}

/** A request id in the go-wmp / wmp-js format: `req-` + b64url(16 random bytes). */
export function newRequestId(): string {
  return `req-${b64urlEncode(randomBytes(16))}`;
}

/**
 * Request ids for one connection: a random 96-bit prefix and a counter. Ids only need to be
 * unique per session (core §3.1) and unpredictable across connections; drawing 128 fresh random
 * bits per call cost a sixth of a round trip.
 */
export function requestIdSequence(): () => string {
  const prefix = `req-${b64urlEncode(randomBytes(12))}`;
  let n = 0;
  return () => `${prefix}${(n++).toString(36)}`;
}

/** A secret (resumption token, HTTP binding token): `prefix` + b64url(24 random bytes), 192 bits. */
export function newSecret(prefix: string): string {
  return `${prefix}${b64urlEncode(randomBytes(24))}`;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Random bytes drawn at once for message ids: one CSPRNG call per 256 ids instead of one each. */
const POOL_BYTES = 4096;
const ID_BYTES = 16;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

/**
 * A message id the server assigns to a deliver sent without an id (docs/wmp-profile.md, "Relay
 * routing and delivery"): `msg-` + b64url of 16 CSPRNG bytes (128 bits). The bytes come from a pool
 * refilled in place once all of it was used, so no byte serves two ids; the same unpadded base64url
 * as `b64urlEncode`.
 */
export function newMessageId(): string {
  if (poolAt + ID_BYTES > POOL_BYTES) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += ID_BYTES;
  let out = 'msg-';
  // 15 bytes are 20 characters; the 16th byte is 2 more (unpadded).
  for (let i = at; i < at + 15; i += 3) {
    const n = (pool[i]! << 16) | (pool[i + 1]! << 8) | pool[i + 2]!;
    out += B64URL[n >> 18]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  const last = pool[at + 15]!;
  return out + B64URL[last >> 2]! + B64URL[(last & 3) << 4]!;
}
