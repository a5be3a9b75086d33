import { base64urlnopad, hex } from '@scure/base';

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 decoding that refuses malformed input instead of replacing it. */
export function fromUtf8(bytes: Uint8Array): string {
  return strictDecoder.decode(bytes);
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Unpadded base64url (RFC 7515 §2). Written out rather than @scure/base's generic radix
 * encoder, which cost a relay 2% of its CPU on signatures and hashes; decoding stays strict there.
 */
export function b64urlEncode(bytes: Uint8Array): string {
  let out = '';
  const whole = bytes.length - (bytes.length % 3);
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[n >> 18]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  const rest = bytes.length - whole;
  if (rest === 1) {
    const n = bytes[whole]!;
    out += B64URL[n >> 2]! + B64URL[(n & 3) << 4]!;
  } else if (rest === 2) {
    const n = (bytes[whole]! << 8) | bytes[whole + 1]!;
    out += B64URL[n >> 10]! + B64URL[(n >> 4) & 63]! + B64URL[(n & 15) << 2]!;
  }
  return out;
}

/** Strict unpadded base64url: throws on padding, foreign characters or non-canonical trailing bits. */
export function b64urlDecode(text: string): Uint8Array {
  return base64urlnopad.decode(text);
}

export function toHex(bytes: Uint8Array): string {
  return hex.encode(bytes);
}

export function fromHex(text: string): Uint8Array {
  return hex.decode(text);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Compares in time that depends only on the length, for secrets (tokens, challenges, MACs). */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** `timingSafeEqual` for strings (compared as UTF-8). */
export function timingSafeEqualString(a: string, b: string): boolean {
  return timingSafeEqual(utf8(a), utf8(b));
}

/** Cryptographically random bytes from the platform (Web Crypto, present in Node 20 and browsers). */
export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}
