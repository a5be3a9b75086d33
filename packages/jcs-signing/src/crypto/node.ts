import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { BoundedMap } from '@wmp/jsonrpc-envelope';
import { isWeakEd25519 } from '../multikey.js';
import type { CryptoBackend } from './backend.js';

const b64u = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

/**
 * Imported public keys (or null for a weak key), most recently used last; bounded so a flood of
 * keys cannot grow it. OpenSSL does not refuse small-order keys itself, so that check (a point
 * decompression) runs once per key here, keeping both paths equally strict.
 */
const MAX_CACHED_KEYS = 4096;
const publicKeys = new BoundedMap<string, KeyObject | null>(MAX_CACHED_KEYS);

function importPublicKey(publicKey: Uint8Array): KeyObject | null {
  const id = b64u(publicKey);
  let key = publicKeys.get(id);
  if (key !== undefined) {
    publicKeys.delete(id);
  } else {
    key = isWeakEd25519(publicKey)
      ? null
      : createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: id }, format: 'jwk' });
  }
  publicKeys.set(id, key);
  return key;
}

/** Imported P-256 keys (or null for one OpenSSL refused), bounded like the Ed25519 ones. */
const p256Keys = new BoundedMap<string, KeyObject | null>(MAX_CACHED_KEYS);
/** SubjectPublicKeyInfo DER of an uncompressed P-256 point, up to the point itself. */
const SPKI_P256_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

function importP256(publicKey: Uint8Array): KeyObject | null {
  const id = b64u(publicKey);
  let key = p256Keys.get(id);
  if (key !== undefined) {
    p256Keys.delete(id);
  } else {
    try {
      // OpenSSL decodes the point and refuses one off the curve.
      key = createPublicKey({ key: Buffer.concat([SPKI_P256_PREFIX, publicKey]), format: 'der', type: 'spki' });
    } catch {
      key = null;
    }
  }
  p256Keys.set(id, key);
  return key;
}

// Node 20: JWK import goes straight to OpenSSL's raw-key API, while DER goes through OpenSSL 3's
// decoder framework, about ten times slower (520 vs 50 µs here); Node requires `x` to be a string
// but derives the public key from `d`, so it is left empty. Node 24 checks `x` against `d` and
// refuses that ("Invalid JWK OKP key"), and there PKCS#8 DER takes 57 µs: whichever this Node
// accepts is chosen once.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const importSeedJwk = (seed: Uint8Array): KeyObject =>
  createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: b64u(seed), x: '' }, format: 'jwk' });
const importSeedDer = (seed: Uint8Array): KeyObject =>
  createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
const importSeed: (seed: Uint8Array) => KeyObject = (() => {
  try {
    importSeedJwk(new Uint8Array(32).fill(1));
    return importSeedJwk;
  } catch {
    return importSeedDer;
  }
})();

/** node:crypto (OpenSSL): about ten times noble's Ed25519 speed; OpenSSL verification is strict. */
export const backend: CryptoBackend = {
  name: 'node',
  ed25519PublicKey(seed) {
    const { x } = createPublicKey(importSeed(seed)).export({ format: 'jwk' });
    return new Uint8Array(Buffer.from(x!, 'base64url'));
  },
  ed25519Signer(seed) {
    const key = importSeed(seed);
    return (message) => new Uint8Array(sign(null, message, key));
  },
  ed25519Verify(publicKey, message, signature) {
    if (publicKey.length !== 32 || signature.length !== 64) return false;
    try {
      const key = importPublicKey(publicKey);
      return key !== null && verify(null, message, key, signature);
    } catch {
      return false;
    }
  },
  p256Verify(publicKey, message, signature) {
    if (publicKey.length !== 65 || publicKey[0] !== 4 || signature.length !== 64) return false;
    try {
      const key = importP256(publicKey);
      return key !== null && verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, signature);
    } catch {
      return false;
    }
  },
  sha256(data) {
    return new Uint8Array(createHash('sha256').update(data).digest());
  },
};
