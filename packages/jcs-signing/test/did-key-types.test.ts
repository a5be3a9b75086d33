// The key types a did:key or did:jwk of another implementation names (for routing to identities
// this project may not verify itself): known signing-key multicodecs, public JWKs only.

import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import {
  b64urlEncode,
  didJwkFromPublicKey,
  didJwkKeyType,
  didKeyType,
  encodeX25519Multikey,
  generateKeypair,
  utf8,
} from '../src/index.js';

const jwk = (value: unknown) => `did:jwk:${b64urlEncode(utf8(JSON.stringify(value)))}`;

describe('didKeyType', () => {
  it('names the key type of the did:key method examples and of ours', () => {
    // did:key method specification (W3C CCG), test vectors.
    expect(didKeyType('did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169')).toBe('P-256');
    expect(didKeyType('did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme')).toBe('secp256k1');
    expect(didKeyType('did:key:z82Lm1MpAkeJcix9K8TMiLd5NMAhnwkjjCBeWHXyu3U4oT2MVJJKXkcVBgjGhnLBn2Kaau9')).toBe('P-384');
    expect(didKeyType(generateKeypair().did)).toBe('Ed25519');
  });

  it('refuses what decodes to no signing key', () => {
    const ours = generateKeypair().did;
    const p256 = base58.decode('DnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169');
    for (const bad of [
      'did:key:',
      'did:web:example.com',
      `did:key:u${ours.slice(9)}`, // another multibase
      `${ours.slice(0, -1)}0`, // outside base58
      `${ours}#${ours.slice(8)}`, // a DID URL, not a DID
      `did:key:${encodeX25519Multikey(new Uint8Array(32).fill(9))}`, // X25519: no signing key
      `did:key:z${base58.encode(Uint8Array.of(0x80, 0x24, 0x04, ...new Uint8Array(64).fill(1)))}`, // uncompressed P-256
      `did:key:z${base58.encode(Uint8Array.of(...p256.slice(0, 2), 0x05, ...p256.slice(3)))}`, // no EC point prefix
      `did:key:z${base58.encode(Uint8Array.of(0xed, 0x01, ...new Uint8Array(31)))}`, // an Ed25519 key one byte short
    ]) {
      expect(() => didKeyType(bad), bad).toThrow();
    }
  });
});

describe('didJwkKeyType', () => {
  it('names the key type of public JWKs', () => {
    expect(didJwkKeyType(didJwkFromPublicKey(generateKeypair().publicKey))).toBe('OKP/Ed25519');
    expect(didJwkKeyType(jwk({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }))).toBe('EC/P-256');
    expect(didJwkKeyType(jwk({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }))).toBe('RSA');
  });

  it('refuses private keys, symmetric keys, unknown types and what is no JWK', () => {
    for (const bad of [
      jwk({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', d: 'AAAA' }),
      jwk({ kty: 'oct', k: 'AAAA' }),
      jwk({ kty: 'EC', crv: 'P-257', x: 'AAAA', y: 'AAAA' }),
      jwk({ kty: 'EC', crv: 'P-256', x: 'AAAA' }),
      jwk({ kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }),
      jwk({ kty: 'toString' }),
      jwk(['not', 'an', 'object']),
      'did:jwk:not base64',
      `${jwk({ kty: 'RSA', n: 'AQAB', e: 'AQAB' })}#0`,
    ]) {
      expect(() => didJwkKeyType(bad), bad).toThrow();
    }
  });
});
