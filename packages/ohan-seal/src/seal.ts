import {
  concatBytes,
  decodeX25519Multikey,
  InvalidKeyError,
  isSmallOrderX25519,
  randomBytes,
  utf8,
} from '@wmp/jcs-signing';
import { backend } from '#crypto';
import { b64, decodeLowerHex, lowerHex } from './encoding.js';
import { OhanOpenError, OhanSealError } from './errors.js';
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, PAD_BLOCK, SEAL_SUITE } from './profile.js';

/** Who an event is sealed to: the signing key it is addressed by, and the X25519 key it is encrypted to. */
export interface SealRecipient {
  /** Ed25519 Multikey (`z6Mk...`). */
  readonly key: string;
  /** X25519 Multikey (`z6LS...`), the `enc` of the recipient's card. */
  readonly enc: string;
}

/** Fixed randomness, for reproducing test vectors only. */
export interface SealRandomness {
  readonly ephemeralSecret?: Uint8Array;
  readonly nonce?: Uint8Array;
}

/** Smallest multiple of 256 that holds the 4-byte length prefix and the envelope. */
export function paddedLength(envelopeLength: number): number {
  return Math.ceil((4 + envelopeLength) / PAD_BLOCK) * PAD_BLOCK;
}

/** uint32_be(len) || envelope || zeros, to a multiple of 256 bytes. */
export function padEnvelope(envelope: Uint8Array): Uint8Array {
  const out = new Uint8Array(paddedLength(envelope.length));
  new DataView(out.buffer).setUint32(0, envelope.length);
  out.set(envelope, 4);
  return out;
}

/** The envelope inside a padded plaintext; the prefix must fit and every padding byte be zero. */
export function unpadEnvelope(plaintext: Uint8Array): Uint8Array {
  if (plaintext.length < 4) throw new OhanOpenError('padding');
  const length = new DataView(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength).getUint32(0);
  if (length > plaintext.length - 4) throw new OhanOpenError('padding');
  let nonZero = 0;
  for (let i = 4 + length; i < plaintext.length; i++) nonZero |= plaintext[i]!;
  if (nonZero !== 0) throw new OhanOpenError('padding');
  return plaintext.subarray(4, 4 + length);
}

/** AAD = ASCII(to) || epk (32 raw bytes) || ASCII(seal). */
export function sealAad(to: string, epk: Uint8Array): Uint8Array {
  return concatBytes(utf8(to), epk, utf8(SEAL_SUITE));
}

/** key = SHA-256(shared || epk || recipient_enc), all raw 32-byte values. */
export function sealKey(shared: Uint8Array, epk: Uint8Array, recipientEnc: Uint8Array): Uint8Array {
  return backend.sha256(concatBytes(shared, epk, recipientEnc));
}

function isAllZero(bytes: Uint8Array): boolean {
  let acc = 0;
  for (const b of bytes) acc |= b;
  return acc === 0;
}

/** Seals envelope bytes to a recipient (docs/ohan-profile.md, "The seal"): returns the event's `epk` and `payload`. */
export function sealEnvelope(
  envelope: Uint8Array,
  recipient: SealRecipient,
  randomness: SealRandomness = {},
): { epk: string; payload: string } {
  let recipientEnc: Uint8Array;
  try {
    recipientEnc = decodeX25519Multikey(recipient.enc);
  } catch (e) {
    throw new OhanSealError(e instanceof InvalidKeyError && e.weak ? 'small_order' : 'key');
  }
  const esk = randomness.ephemeralSecret ?? randomBytes(32);
  const epk = backend.x25519PublicKey(esk);
  const shared = backend.x25519(esk, recipientEnc);
  if (isAllZero(shared)) throw new OhanSealError('small_order');
  const key = sealKey(shared, epk, recipientEnc);
  const nonce = randomness.nonce ?? randomBytes(GCM_NONCE_BYTES);
  const { ciphertext, tag } = backend.aesGcmSeal(key, nonce, sealAad(recipient.key, epk), padEnvelope(envelope));
  return { epk: lowerHex(epk), payload: b64.encode(concatBytes(nonce, tag, ciphertext)) };
}

/**
 * Decrypts a sealed payload with the recipient's X25519 secret and returns the envelope bytes.
 * Throws `OhanOpenError`: small_order, decrypt (bad encoding, length or tag), padding.
 */
export function openPayload(
  sealed: { readonly to: string; readonly epk: string; readonly payload: string },
  encSecret: Uint8Array,
): Uint8Array {
  const epk = decodeLowerHex(sealed.epk, 32);
  if (!epk) throw new OhanOpenError('decrypt');
  if (isSmallOrderX25519(epk)) throw new OhanOpenError('small_order');
  let bytes: Uint8Array;
  try {
    bytes = b64.decode(sealed.payload);
  } catch {
    throw new OhanOpenError('decrypt');
  }
  const overhead = GCM_NONCE_BYTES + GCM_TAG_BYTES;
  if (bytes.length < overhead + PAD_BLOCK || (bytes.length - overhead) % PAD_BLOCK !== 0) {
    throw new OhanOpenError('decrypt');
  }
  const shared = backend.x25519(encSecret, epk, true);
  if (isAllZero(shared)) throw new OhanOpenError('small_order');
  const key = sealKey(shared, epk, backend.x25519PublicKey(encSecret, true));
  const plaintext = backend.aesGcmOpen(
    key,
    bytes.subarray(0, GCM_NONCE_BYTES),
    sealAad(sealed.to, epk),
    bytes.subarray(overhead),
    bytes.subarray(GCM_NONCE_BYTES, overhead),
  );
  if (!plaintext) throw new OhanOpenError('decrypt');
  return unpadEnvelope(plaintext);
}
