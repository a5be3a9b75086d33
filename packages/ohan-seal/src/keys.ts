import { encodeX25519Multikey, InvalidKeyError, randomBytes } from '@wmp/jcs-signing';
import { backend } from '#crypto';

/** An X25519 key for receiving sealed events: its Multikey goes on the card as `enc`. */
export interface EncKeypair {
  readonly publicKey: Uint8Array;
  /** `z6LS...` */
  readonly multikey: string;
  /** The 32-byte X25519 secret, for `openEvent` and for storing the key. */
  readonly secretKey: Uint8Array;
}

export function encKeypairFromSecret(secret: Uint8Array): EncKeypair {
  if (!(secret instanceof Uint8Array) || secret.length !== 32)
    throw new InvalidKeyError('an X25519 secret is 32 bytes');
  const secretKey = secret.slice();
  const publicKey = backend.x25519PublicKey(secretKey);
  return Object.freeze({ publicKey, multikey: encodeX25519Multikey(publicKey), secretKey });
}

/** A fresh, independent X25519 key (not derived from the signing key: one key, one purpose). */
export function generateEncKeypair(): EncKeypair {
  return encKeypairFromSecret(randomBytes(32));
}
