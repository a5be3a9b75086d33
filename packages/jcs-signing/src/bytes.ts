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

/** Unpadded base64url (RFC 7515 §2). */
export function b64urlEncode(bytes: Uint8Array): string {
  return base64urlnopad.encode(bytes);
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
