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

/** A session id: only the server makes them (DESIGN §5). */
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

/** A message id the server assigns to a deliver sent without an id (DESIGN §3). */
export function newMessageId(): string {
  return `msg-${b64urlEncode(randomBytes(16))}`;
}
