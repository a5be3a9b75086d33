import { base58 } from '@scure/base';
import { b64urlDecode, fromUtf8 } from './bytes.js';
import { InvalidKeyError } from './errors.js';

/**
 * The public-key multicodecs (varint prefix, key length) a did:key of another implementation may
 * name: signing keys only; the EC ones as compressed points. Ed25519 is checked further below.
 */
const DID_KEY_CODECS: readonly { readonly type: string; readonly prefix: Uint8Array; readonly length: number }[] = [
  { type: 'Ed25519', prefix: Uint8Array.of(0xed, 0x01), length: 32 },
  { type: 'secp256k1', prefix: Uint8Array.of(0xe7, 0x01), length: 33 },
  { type: 'P-256', prefix: Uint8Array.of(0x80, 0x24), length: 33 },
  { type: 'P-384', prefix: Uint8Array.of(0x81, 0x24), length: 49 },
];

/** Longest multibase text of those (P-384: 51 bytes in base58). */
const MAX_DID_KEY_MULTIBASE = 80;

/**
 * The key type a `did:key` (without fragment) names, or `InvalidKeyError`: `z` + base58btc of a
 * known signing-key multicodec and a key of its length, an EC key as a compressed point (0x02 or
 * 0x03 first). The form only, for a relay routing to identities it may never verify itself: the
 * point is not decompressed (that costs ~200 µs for Ed25519; `publicKeyFromDidKey` does it). The
 * base58 text is canonical, as every prefix starts with a non-zero byte.
 */
export function didKeyType(did: string): string {
  if (typeof did !== 'string' || !did.startsWith('did:key:')) throw new InvalidKeyError('not a did:key');
  const text = did.slice('did:key:'.length);
  if (text.length > MAX_DID_KEY_MULTIBASE || text[0] !== 'z') throw new InvalidKeyError('not a base58btc multikey');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text.slice(1));
  } catch {
    throw new InvalidKeyError('not a base58btc multikey');
  }
  const codec = DID_KEY_CODECS.find(
    (c) => bytes.length === c.prefix.length + c.length && bytes[0] === c.prefix[0] && bytes[1] === c.prefix[1],
  );
  if (codec === undefined) throw new InvalidKeyError('not a known public-key multicodec');
  const first = bytes[codec.prefix.length];
  if (codec.type !== 'Ed25519' && first !== 0x02 && first !== 0x03)
    throw new InvalidKeyError('not a compressed EC point');
  return codec.type;
}

/** Curves a did:jwk of each key type may name, and the members its public part needs. */
const JWK_KEY_TYPES: Readonly<
  Record<string, { readonly curves?: readonly string[]; readonly members: readonly string[] }>
> = {
  OKP: { curves: ['Ed25519', 'Ed448', 'X25519', 'X448'], members: ['x'] },
  EC: { curves: ['P-256', 'P-384', 'P-521', 'secp256k1'], members: ['x', 'y'] },
  RSA: { members: ['n', 'e'] },
};

/** Members of a JWK's private part (RFC 7518 §6): a did:jwk carrying one is refused. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * The key type a `did:jwk` (without fragment) names, as `kty` or `kty/crv`, or `InvalidKeyError`:
 * base64url of a JSON object that is a public JWK (OKP, EC or RSA with their members as base64url,
 * no private member; an Ed25519 `x` of 32 bytes). The form only, as `didKeyType`.
 */
export function didJwkKeyType(did: string): string {
  if (typeof did !== 'string' || !did.startsWith('did:jwk:') || did.includes('#')) {
    throw new InvalidKeyError('not a did:jwk');
  }
  let jwk: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(fromUtf8(b64urlDecode(did.slice('did:jwk:'.length))));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
    jwk = parsed as Record<string, unknown>;
  } catch {
    throw new InvalidKeyError('did:jwk does not hold a JWK');
  }
  const kty = jwk.kty;
  const rules = typeof kty === 'string' && Object.hasOwn(JWK_KEY_TYPES, kty) ? JWK_KEY_TYPES[kty] : undefined;
  if (rules === undefined) throw new InvalidKeyError('did:jwk: unknown key type');
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) throw new InvalidKeyError('did:jwk carries a private key');
  if (rules.curves !== undefined && !rules.curves.includes(jwk.crv as string)) {
    throw new InvalidKeyError('did:jwk: unknown curve');
  }
  for (const member of rules.members) {
    const value = jwk[member];
    if (typeof value !== 'string' || value.length === 0) throw new InvalidKeyError(`did:jwk: ${member} missing`);
    let decoded: Uint8Array;
    try {
      decoded = b64urlDecode(value);
    } catch {
      throw new InvalidKeyError(`did:jwk: ${member} is not base64url`);
    }
    if (jwk.crv === 'Ed25519' && decoded.length !== 32) throw new InvalidKeyError('did:jwk: not an Ed25519 key');
  }
  return rules.curves === undefined ? (kty as string) : `${kty as string}/${jwk.crv as string}`;
}
