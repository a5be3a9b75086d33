import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import type { CryptoBackend } from './backend.js';

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI / PKCS#8 (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Imported public keys, most recently used last; bounded so a flood of keys cannot grow it. */
const MAX_CACHED_KEYS = 4096;
const publicKeys = new Map<string, KeyObject>();

function importPublicKey(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64');
  let key = publicKeys.get(id);
  if (key) {
    publicKeys.delete(id);
  } else {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    if (publicKeys.size >= MAX_CACHED_KEYS) publicKeys.delete(publicKeys.keys().next().value as string);
  }
  publicKeys.set(id, key);
  return key;
}

function importSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** node:crypto (OpenSSL): about ten times noble's Ed25519 speed; OpenSSL verification is strict. */
export const backend: CryptoBackend = {
  name: 'node',
  ed25519PublicKey(seed) {
    const spki = createPublicKey(importSeed(seed)).export({ format: 'der', type: 'spki' });
    return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  },
  ed25519Signer(seed) {
    const key = importSeed(seed);
    return (message) => new Uint8Array(sign(null, message, key));
  },
  ed25519Verify(publicKey, message, signature) {
    if (publicKey.length !== 32 || signature.length !== 64) return false;
    try {
      return verify(null, message, importPublicKey(publicKey), signature);
    } catch {
      return false;
    }
  },
  sha256(data) {
    return new Uint8Array(createHash('sha256').update(data).digest());
  },
};
