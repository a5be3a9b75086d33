import { backend } from '#crypto';
import { randomBytes } from './bytes.js';
import { didJwkFromPublicKey, didKeyFromPublicKey, kidForDid } from './did.js';
import { InvalidKeyError } from './errors.js';
import { encodeEd25519Multikey } from './multikey.js';

/** Anything that signs with Ed25519: a local keypair, or a wallet's secure element behind an async call. */
export interface Signer {
  readonly publicKey: Uint8Array;
  /** The verification-method URI put in JWS headers (`kid`). */
  readonly kid: string;
  sign(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/** An Ed25519 identity held in memory. Its DID is `did:key` unless created with `didMethod: 'jwk'`. */
export interface Keypair extends Signer {
  readonly multikey: string;
  readonly did: string;
  sign(data: Uint8Array): Uint8Array;
  /** The 32-byte seed, for storing the key; handle with care. */
  exportSeed(): Uint8Array;
}

export interface KeypairOptions {
  readonly didMethod?: 'key' | 'jwk';
}

/** A keypair from a 32-byte seed (RFC 8032 private key). */
export function keypairFromSeed(seed: Uint8Array, options: KeypairOptions = {}): Keypair {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new InvalidKeyError('an Ed25519 seed is 32 bytes');
  const secret = seed.slice();
  const publicKey = backend.ed25519PublicKey(secret);
  const sign = backend.ed25519Signer(secret);
  const did = options.didMethod === 'jwk' ? didJwkFromPublicKey(publicKey) : didKeyFromPublicKey(publicKey);
  return Object.freeze({
    publicKey,
    multikey: encodeEd25519Multikey(publicKey),
    did,
    kid: kidForDid(did),
    sign,
    exportSeed: () => secret.slice(),
  });
}

/** A fresh random keypair. */
export function generateKeypair(options: KeypairOptions = {}): Keypair {
  return keypairFromSeed(randomBytes(32), options);
}

/** Strict Ed25519 verification with the platform's fastest implementation (never throws). */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return backend.ed25519Verify(publicKey, message, signature);
}

/** ES256 verification (`r || s` signature, uncompressed P-256 point) on the loaded crypto path (never throws). */
export function verifyP256(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return backend.p256Verify(publicKey, message, signature);
}

export function sha256(data: Uint8Array): Uint8Array {
  return backend.sha256(data);
}

/** Which implementation this build runs: `node` (node:crypto) or `portable` (noble). */
export const cryptoPath: 'node' | 'portable' = backend.name;
