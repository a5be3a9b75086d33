import { gcm } from '@noble/ciphers/aes.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base64 } from '@scure/base';
import type { SealBackend } from './backend.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** noble: pure JS, for browsers and wallets. */
export const backend: SealBackend = {
  name: 'portable',
  x25519PublicKey(secret) {
    return x25519.getPublicKey(secret);
  },
  x25519(secret, peer) {
    try {
      return x25519.getSharedSecret(secret, peer);
    } catch {
      // noble throws on an all-zero result (a small-order peer); report it as zeros.
      return new Uint8Array(32);
    }
  },
  aesGcmSeal(key, nonce, aad, plaintext) {
    const sealed = gcm(key, nonce, aad).encrypt(plaintext);
    return { ciphertext: sealed.subarray(0, sealed.length - 16), tag: sealed.subarray(sealed.length - 16) };
  },
  aesGcmOpen(key, nonce, aad, ciphertext, tag) {
    const sealed = new Uint8Array(ciphertext.length + tag.length);
    sealed.set(ciphertext);
    sealed.set(tag, ciphertext.length);
    try {
      return gcm(key, nonce, aad).decrypt(sealed);
    } catch {
      return undefined;
    }
  },
  sha256(data) {
    return sha256(data);
  },
  ascii(text) {
    return new TextEncoder().encode(text);
  },
  sha256Hex(text) {
    return bytesToHex(sha256(new TextEncoder().encode(text)));
  },
  isBase64(text) {
    if (text.length % 4 !== 0 || !BASE64.test(text)) return false;
    try {
      return base64.encode(base64.decode(text)) === text;
    } catch {
      return false;
    }
  },
};
