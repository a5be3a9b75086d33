import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from './bytes.js';
import { InvalidKeyError } from './errors.js';
import { jcs } from './jcs.js';
import { decodeEd25519Multikey, encodeEd25519Multikey, isWeakEd25519 } from './multikey.js';

const MAX_DID_LENGTH = 1024;

/** `did:key:z6Mk...` of an Ed25519 public key. */
export function didKeyFromPublicKey(publicKey: Uint8Array): string {
  return `did:key:${encodeEd25519Multikey(publicKey)}`;
}

/** The key of `did:key:z6Mk...` (a `#fragment`, if any, must name the same key). */
export function publicKeyFromDidKey(did: string): Uint8Array {
  const [id, fragment] = splitFragment(did);
  if (!id.startsWith('did:key:')) throw new InvalidKeyError('not a did:key');
  const mk = id.slice('did:key:'.length);
  if (fragment !== undefined && fragment !== mk) throw new InvalidKeyError('did:key fragment names another key');
  return decodeEd25519Multikey(mk);
}

/** `did:jwk:` + base64url(JCS of the public JWK) for an Ed25519 key. */
export function didJwkFromPublicKey(publicKey: Uint8Array): string {
  return `did:jwk:${b64urlEncode(utf8(jcs({ crv: 'Ed25519', kty: 'OKP', x: b64urlEncode(publicKey) })))}`;
}

/** The Ed25519 key of a `did:jwk` (fragment `#0` allowed); refuses JWKs that carry a private part. */
export function publicKeyFromDidJwk(did: string): Uint8Array {
  const [id, fragment] = splitFragment(did);
  if (!id.startsWith('did:jwk:')) throw new InvalidKeyError('not a did:jwk');
  if (fragment !== undefined && fragment !== '0') throw new InvalidKeyError('did:jwk fragment must be #0');
  let jwk: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(fromUtf8(b64urlDecode(id.slice('did:jwk:'.length))));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
    jwk = parsed as Record<string, unknown>;
  } catch {
    throw new InvalidKeyError('did:jwk does not hold a JWK');
  }
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw new InvalidKeyError('did:jwk is not an Ed25519 key');
  }
  if ('d' in jwk) throw new InvalidKeyError('did:jwk carries a private key');
  let x: Uint8Array;
  try {
    x = b64urlDecode(jwk.x);
  } catch {
    throw new InvalidKeyError('did:jwk x is not base64url');
  }
  if (x.length !== 32 || isWeakEd25519(x)) throw new InvalidKeyError('weak or malformed Ed25519 key');
  return x;
}

/** The verification-method id (kid) we sign with for a DID: did:key uses its multikey, did:jwk `#0`. */
export function kidForDid(did: string): string {
  if (did.startsWith('did:key:')) return `${did}#${did.slice('did:key:'.length)}`;
  if (did.startsWith('did:jwk:')) return `${did}#0`;
  throw new InvalidKeyError('only did:key and did:jwk have a built-in kid');
}

/** The DID part of a DID URL (`did:key:z..#z..` -> `did:key:z..`). */
export function didOf(didUrl: string): string {
  return splitFragment(didUrl)[0];
}

function splitFragment(didUrl: string): [string, string | undefined] {
  if (typeof didUrl !== 'string' || didUrl.length > MAX_DID_LENGTH) throw new InvalidKeyError('identifier too long');
  const hash = didUrl.indexOf('#');
  return hash < 0 ? [didUrl, undefined] : [didUrl.slice(0, hash), didUrl.slice(hash + 1)];
}

/** did:key helpers as one namespace. */
export const didKey = { fromPublicKey: didKeyFromPublicKey, toPublicKey: publicKeyFromDidKey } as const;
/** did:jwk helpers as one namespace. */
export const didJwk = { fromPublicKey: didJwkFromPublicKey, toPublicKey: publicKeyFromDidJwk } as const;
