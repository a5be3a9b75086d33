import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { BoundedMap } from '@wmp/jsonrpc-envelope';
import { concatBytes } from './bytes.js';
import { InvalidKeyError } from './errors.js';

/** Multicodec prefixes (unsigned varints): ed25519-pub 0xed, x25519-pub 0xec. */
const ED25519_PREFIX = Uint8Array.of(0xed, 0x01);
const X25519_PREFIX = Uint8Array.of(0xec, 0x01);
const MAX_MULTIKEY_LENGTH = 64;

export type MultikeyType = 'ed25519' | 'x25519';

const prefixOf: Record<MultikeyType, Uint8Array> = { ed25519: ED25519_PREFIX, x25519: X25519_PREFIX };

/** `z` + base58btc(multicodec prefix + 32-byte key): `z6Mk...` for Ed25519, `z6LS...` for X25519. */
export function encodeMultikey(type: MultikeyType, publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new InvalidKeyError('a public key is 32 bytes');
  return `z${base58.encode(concatBytes(prefixOf[type], publicKey))}`;
}

function decodeRaw(text: string): { type: MultikeyType; publicKey: Uint8Array } {
  if (typeof text !== 'string' || text.length > MAX_MULTIKEY_LENGTH || text[0] !== 'z') {
    throw new InvalidKeyError('not a base58btc multikey');
  }
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text.slice(1));
  } catch {
    throw new InvalidKeyError('not a base58btc multikey');
  }
  if (bytes.length !== 34 || bytes[1] !== 0x01) throw new InvalidKeyError('not an Ed25519 or X25519 multikey');
  const type: MultikeyType | undefined = bytes[0] === 0xed ? 'ed25519' : bytes[0] === 0xec ? 'x25519' : undefined;
  if (!type) throw new InvalidKeyError('not an Ed25519 or X25519 multikey');
  const publicKey = bytes.slice(2);
  // base58 has one encoding per byte string, but leading-zero handling differs between libraries:
  // insist on the canonical text so that one key has exactly one identifier.
  if (encodeMultikey(type, publicKey) !== text) throw new InvalidKeyError('non-canonical multikey');
  return { type, publicKey };
}

const P = 2n ** 255n - 19n;
// u-coordinates of the points of order 1, 2, 4 and 8 on Curve25519 (besides 0 and 1).
const SMALL_ORDER_U = new Set([
  0n,
  1n,
  325606250916557431795983626356110631294008115727848805560023387167927233504n,
  39382357235489614581723060781553021112529911719440698176882885853963445705823n,
  P - 1n,
]);

/** True for an X25519 public key whose Diffie-Hellman output would be predictable. */
export function isSmallOrderX25519(publicKey: Uint8Array): boolean {
  let u = 0n;
  for (let i = 31; i >= 0; i--) u = (u << 8n) | BigInt(i === 31 ? publicKey[i]! & 0x7f : publicKey[i]!);
  return SMALL_ORDER_U.has(u % P);
}

/** True for an Ed25519 public key that is not a canonical curve point of large order. */
export function isWeakEd25519(publicKey: Uint8Array): boolean {
  try {
    return ed25519.Point.fromBytes(publicKey).isSmallOrder();
  } catch {
    return true;
  }
}

/** Decoded keys; bounded, because decoding checks the point (a square root) and relays see keys repeatedly. */
const MAX_CACHED = 4096;
const decodedEd25519 = new BoundedMap<string, Uint8Array>(MAX_CACHED);

/** Decodes a `z6Mk...` Ed25519 multikey; refuses non-canonical text, off-curve and small-order keys. */
export function decodeEd25519Multikey(text: string): Uint8Array {
  const cached = decodedEd25519.get(text);
  if (cached) return cached.slice();
  const { type, publicKey } = decodeRaw(text);
  if (type !== 'ed25519') throw new InvalidKeyError('not an Ed25519 multikey');
  if (isWeakEd25519(publicKey)) throw new InvalidKeyError('weak Ed25519 key', true);
  decodedEd25519.set(text, publicKey);
  return publicKey.slice();
}

/** Decodes a `z6LS...` X25519 multikey; refuses small-order keys. */
export function decodeX25519Multikey(text: string): Uint8Array {
  const { type, publicKey } = decodeRaw(text);
  if (type !== 'x25519') throw new InvalidKeyError('not an X25519 multikey');
  if (isSmallOrderX25519(publicKey)) throw new InvalidKeyError('small-order X25519 key', true);
  return publicKey;
}

export function encodeEd25519Multikey(publicKey: Uint8Array): string {
  return encodeMultikey('ed25519', publicKey);
}

export function encodeX25519Multikey(publicKey: Uint8Array): string {
  return encodeMultikey('x25519', publicKey);
}

/** Decodes either kind, with the same checks as the typed decoders. */
export function decodeMultikey(text: string): { type: MultikeyType; publicKey: Uint8Array } {
  const { type } = decodeRaw(text);
  return { type, publicKey: type === 'ed25519' ? decodeEd25519Multikey(text) : decodeX25519Multikey(text) };
}

/** Multikey helpers as one namespace: `multikey.encode(key, 'ed25519')`, `multikey.decode(text)`. */
export const multikey = {
  encode: (publicKey: Uint8Array, type: MultikeyType = 'ed25519') => encodeMultikey(type, publicKey),
  decode: decodeMultikey,
} as const;
