import { ed25519 } from '@noble/curves/ed25519.js';
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
  sha256(data) {
    return sha256(data);
  },
};
