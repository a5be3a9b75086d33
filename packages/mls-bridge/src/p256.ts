import { p256 } from '@noble/curves/nist.js';
import { b64urlDecode, b64urlEncode, fromUtf8, jcs, timingSafeEqual, utf8 } from '@wmp/jcs-signing';

// Suite 0x0002 signs with ECDSA P-256, so an Ed25519 participant key cannot be its MLS key. Such a
// member is named by the did:jwk of its P-256 key: the key is in the identifier, which keeps the
// credential check as local and default-deny as for did:key.

const DID_JWK = 'did:jwk:';

/** `did:jwk:` of a P-256 public key (compressed or uncompressed SEC1), over the JCS of its JWK. */
export function didJwkFromP256PublicKey(publicKey: Uint8Array): string {
  const raw = p256.Point.fromBytes(publicKey).toBytes(false);
  const jwk = { crv: 'P-256', kty: 'EC', x: b64urlEncode(raw.subarray(1, 33)), y: b64urlEncode(raw.subarray(33, 65)) };
  return DID_JWK + b64urlEncode(utf8(jcs(jwk)));
}

/** The P-256 key (compressed SEC1) of a `did:jwk`, or undefined when it is not a valid public P-256 JWK. */
export function p256KeyFromDidJwk(did: string): Uint8Array | undefined {
  if (!did.startsWith(DID_JWK) || did.length > 1024) return undefined;
  try {
    const jwk = JSON.parse(fromUtf8(b64urlDecode(did.slice(DID_JWK.length)))) as Record<string, unknown>;
    if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) return undefined;
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || 'd' in jwk) return undefined;
    if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string') return undefined;
    const x = b64urlDecode(jwk.x);
    const y = b64urlDecode(jwk.y);
    if (x.length !== 32 || y.length !== 32) return undefined;
    const sec1 = new Uint8Array(65);
    sec1[0] = 4;
    sec1.set(x, 1);
    sec1.set(y, 33);
    // fromBytes refuses points off the curve and the point at infinity.
    return p256.Point.fromBytes(sec1).toBytes(true);
  } catch {
    return undefined;
  }
}

/** Whether two SEC1 encodings (either form) name the same valid P-256 point. */
export function sameP256Key(a: Uint8Array, b: Uint8Array): boolean {
  try {
    return timingSafeEqual(p256.Point.fromBytes(a).toBytes(true), p256.Point.fromBytes(b).toBytes(true));
  } catch {
    return false;
  }
}

/** The compressed public key of a P-256 secret scalar; an empty array for an invalid scalar. */
export function p256PublicKey(secret: Uint8Array): Uint8Array {
  return p256.utils.isValidSecretKey(secret) ? p256.getPublicKey(secret, true) : new Uint8Array(0);
}
