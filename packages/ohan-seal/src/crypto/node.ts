import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  hash,
  type KeyObject,
} from 'node:crypto';
import { BoundedMap } from '@wmp/jsonrpc-envelope';
import type { SealBackend } from './backend.js';

const b64u = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

// Node 20: JWK import goes straight to OpenSSL's raw-key API (DER goes through OpenSSL 3's
// decoders, ten times slower); Node requires `x` to be a string but derives the public key from
// `d`. Node 24 checks `x` against `d` and refuses an empty one ("Invalid JWK OKP key"), and there
// PKCS#8 DER is fast (66 µs here): whichever this Node accepts is chosen once.
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const importPrivateKeyJwk = (secret: Uint8Array): KeyObject =>
  createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: b64u(secret), x: '' }, format: 'jwk' });
const importPrivateKeyDer = (secret: Uint8Array): KeyObject =>
  createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, secret]), format: 'der', type: 'pkcs8' });
const importPrivateKey: (secret: Uint8Array) => KeyObject = (() => {
  try {
    importPrivateKeyJwk(new Uint8Array(32).fill(1));
    return importPrivateKeyJwk;
  } catch {
    return importPrivateKeyDer;
  }
})();

/** A recipient opens many events with one secret: keep a few imported (bounded; ephemeral keys are never reused). */
const MAX_CACHED_SECRETS = 16;
const privateKeys = new BoundedMap<string, KeyObject>(MAX_CACHED_SECRETS);

function privateKey(secret: Uint8Array, cache: boolean): KeyObject {
  if (!cache) return importPrivateKey(secret);
  const id = b64u(secret);
  let key = privateKeys.get(id);
  if (!key) {
    key = importPrivateKey(secret);
    privateKeys.set(id, key);
  }
  return key;
}
const publicKey = (raw: Uint8Array) =>
  createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64u(raw) }, format: 'jwk' });

/** node:crypto (OpenSSL): X25519 ~30x and AES-GCM ~15x noble's speed. */
export const backend: SealBackend = {
  name: 'node',
  x25519PublicKey(secret, reused = false) {
    const { x } = createPublicKey(privateKey(secret, reused)).export({ format: 'jwk' });
    return new Uint8Array(Buffer.from(x!, 'base64url'));
  },
  x25519(secret, peer, reused = false) {
    try {
      return new Uint8Array(diffieHellman({ privateKey: privateKey(secret, reused), publicKey: publicKey(peer) }));
    } catch {
      // OpenSSL refuses small-order peers; report it the way the caller checks for it.
      return new Uint8Array(32);
    }
  },
  aesGcmSeal(key, nonce, aad, plaintext) {
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext: new Uint8Array(ciphertext), tag: new Uint8Array(cipher.getAuthTag()) };
  },
  aesGcmOpen(key, nonce, aad, ciphertext, tag) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
    } catch {
      return undefined;
    }
  },
  sha256(data) {
    return new Uint8Array(createHash('sha256').update(data).digest());
  },
  ascii(text) {
    return Buffer.from(text, 'latin1');
  },
  sha256Hex(text) {
    return hash('sha256', text, 'hex');
  },
  isBase64(text) {
    return text.length % 4 === 0 && Buffer.from(text, 'base64').toString('base64') === text;
  },
};
