import { readFileSync } from 'node:fs';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { b64urlEncode } from '../src/bytes.js';
import {
  decodeEd25519Multikey,
  decodeMultikey,
  decodeX25519Multikey,
  didJwk,
  didKey,
  didKeyResolver,
  encodeX25519Multikey,
  fromHex,
  generateKeypair,
  InvalidKeyError,
  isSmallOrderX25519,
  keypairFromSeed,
  publicKeyFromDidJwk,
  toHex,
  utf8,
  verifyEd25519,
} from '../src/index.js';

const vectors = JSON.parse(readFileSync(new URL('../../../vectors/crypto-vectors.json', import.meta.url), 'utf8'));

describe('Multikey and did:key vectors', () => {
  for (const v of vectors.multikey) {
    it(`${v.name}: seed -> public key -> Multikey -> did:key, and X25519`, () => {
      const kp = keypairFromSeed(fromHex(v.ed25519_seed_hex));
      expect(toHex(kp.publicKey)).toBe(v.ed25519_public_hex);
      expect(kp.multikey).toBe(v.ed25519_multikey);
      expect(kp.did).toBe(v.did_key);
      expect(kp.kid).toBe(`${v.did_key}#${v.ed25519_multikey}`);
      expect(toHex(decodeEd25519Multikey(v.ed25519_multikey))).toBe(v.ed25519_public_hex);
      expect(toHex(didKey.toPublicKey(v.did_key))).toBe(v.ed25519_public_hex);
      const x = fromHex(v.x25519_from_ed25519_public_hex);
      expect(toHex(ed25519.utils.toMontgomery(kp.publicKey))).toBe(v.x25519_from_ed25519_public_hex);
      expect(encodeX25519Multikey(x)).toBe(v.x25519_multikey);
      expect(toHex(decodeX25519Multikey(v.x25519_multikey))).toBe(v.x25519_from_ed25519_public_hex);
      expect(decodeMultikey(v.x25519_multikey).type).toBe('x25519');
    });
  }
});

describe('key validation', () => {
  const good = vectors.multikey[1].ed25519_multikey as string;

  it.each([
    ['an X25519 key where Ed25519 is expected', () => decodeEd25519Multikey(vectors.multikey[1].x25519_multikey)],
    ['an Ed25519 key where X25519 is expected', () => decodeX25519Multikey(good)],
    ['a non-base58 character', () => decodeEd25519Multikey(`${good.slice(0, -1)}0`)],
    ['a missing z prefix', () => decodeEd25519Multikey(good.slice(1))],
    ['a truncated key', () => decodeEd25519Multikey(good.slice(0, -2))],
    ['a non-string', () => decodeEd25519Multikey(42 as unknown as string)],
    ['the identity point (small order)', () => decodeEd25519Multikey(ed(fromHex(`01${'00'.repeat(31)}`)))],
    ['a did:key fragment naming another key', () => didKey.toPublicKey(`did:key:${good}#z6Mkother`)],
    [
      'a did:jwk carrying a private key',
      () =>
        publicKeyFromDidJwk(jwk({ kty: 'OKP', crv: 'Ed25519', x: b64urlEncode(new Uint8Array(32).fill(9)), d: 'AA' })),
    ],
    ['a did:jwk of another curve', () => publicKeyFromDidJwk(jwk({ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }))],
  ])('refuses %s', (_name, run) => {
    expect(run).toThrow(InvalidKeyError);
  });

  it('recognises every small-order X25519 point', () => {
    const p = 2n ** 255n - 19n;
    const le = (n: bigint) => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));
    for (const u of [0n, 1n, p - 1n, p, p + 1n]) expect(isSmallOrderX25519(le(u))).toBe(true);
    const order8 = fromHex('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800');
    expect(isSmallOrderX25519(order8)).toBe(true);
    expect(() => decodeX25519Multikey(encodeX25519Multikey(order8))).toThrow(InvalidKeyError);
    expect(isSmallOrderX25519(x25519.getPublicKey(x25519.utils.randomSecretKey()))).toBe(false);
  });

  it('round-trips did:jwk and resolves did:key and did:jwk kids', async () => {
    const kp = generateKeypair({ didMethod: 'jwk' });
    expect(kp.did.startsWith('did:jwk:')).toBe(true);
    expect(kp.kid).toBe(`${kp.did}#0`);
    expect(didJwk.toPublicKey(kp.did)).toEqual(kp.publicKey);
    expect(await didKeyResolver.resolve(kp.kid)).toEqual(kp.publicKey);
    const k2 = generateKeypair();
    expect(await didKeyResolver.resolve(k2.kid)).toEqual(k2.publicKey);
    expect(await didKeyResolver.resolve('did:web:example.com#key-1')).toBeUndefined();
    expect(await didKeyResolver.resolve('did:key:zNotAKey')).toBeUndefined();
  });

  it('signs deterministically (RFC 8032) and verifies strictly', () => {
    const kp = keypairFromSeed(fromHex(vectors.multikey[1].ed25519_seed_hex));
    const msg = utf8('hello');
    const sig = kp.sign(msg);
    expect(toHex(sig)).toBe(toHex(ed25519.sign(msg, kp.exportSeed())));
    expect(verifyEd25519(kp.publicKey, msg, sig)).toBe(true);
    const bad = sig.slice();
    bad[0]! ^= 1;
    expect(verifyEd25519(kp.publicKey, msg, bad)).toBe(false);
    expect(verifyEd25519(kp.publicKey, msg, sig.subarray(0, 63))).toBe(false);
    // A non-canonical S (S + L) must be refused, as RFC 8032 requires.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i]!);
    const sPlusL = s + L;
    const malleable = sig.slice();
    for (let i = 0; i < 32; i++) malleable[32 + i] = Number((sPlusL >> BigInt(8 * i)) & 0xffn);
    expect(verifyEd25519(kp.publicKey, msg, malleable)).toBe(false);
  });

  it('refuses the signature that a small-order key makes valid for every message', () => {
    // A = identity, R = identity, S = 0 satisfies the cofactorless equation [S]B = R + [k]A for any
    // message; strict RFC 8032 verification (both paths) must refuse it.
    const identity = fromHex(`01${'00'.repeat(31)}`);
    const signature = new Uint8Array(64);
    signature.set(identity);
    expect(verifyEd25519(identity, utf8('anything'), signature)).toBe(false);
    expect(verifyEd25519(identity, utf8('anything else'), signature)).toBe(false);
  });
});

function ed(publicKey: Uint8Array): string {
  // Builds the Multikey text by hand so the encoder's own checks do not run.
  return `z${bs58(Uint8Array.of(0xed, 0x01, ...publicKey))}`;
}
function jwk(o: object): string {
  return `did:jwk:${b64urlEncode(utf8(JSON.stringify(o)))}`;
}
function bs58(bytes: Uint8Array): string {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = alphabet[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}
