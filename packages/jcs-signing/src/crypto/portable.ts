import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { CryptoBackend } from './backend.js';

/** noble: pure JS, runs in browsers; verification is strict RFC 8032 (`zip215: false`). */
export const backend: CryptoBackend = {
  name: 'portable',
  ed25519PublicKey(seed) {
    return ed25519.getPublicKey(seed);
  },
  ed25519Signer(seed) {
    const copy = seed.slice();
    return (message) => ed25519.sign(message, copy);
  },
  ed25519Verify(publicKey, message, signature) {
    if (publicKey.length !== 32 || signature.length !== 64) return false;
    try {
      return ed25519.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
  p256Verify(publicKey, message, signature) {
    if (publicKey.length !== 65 || publicKey[0] !== 4 || signature.length !== 64) return false;
    try {
      // lowS off: JWS ES256 has no low-S rule, and WebCrypto and OpenSSL sign high-S half the time.
      return p256.verify(signature, message, publicKey, { lowS: false, prehash: true, format: 'compact' });
    } catch {
      return false;
    }
  },
  sha256(data) {
    return sha256(data);
  },
};
