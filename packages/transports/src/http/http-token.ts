const encoder = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A fresh HTTP session binding secret: 256 random bits, unpadded base64url (43 characters). */
export function createSessionToken(): string {
  return b64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Compares two secrets in time that depends only on their lengths (the length of our tokens is
 * public). Never short-circuits on the first differing byte.
 */
export function constantTimeEqual(presented: string, expected: string): boolean {
  const a = encoder.encode(presented);
  const b = encoder.encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i % Math.max(a.length, 1)] ?? 0) ^ b[i]!;
  return diff === 0;
}

/** The credential of an `Authorization: Bearer <token>` header value, if that is its form. */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization);
  return m?.[1];
}
