/** The primitives that differ between the Node fast path and the portable (browser) path. */
export interface SealBackend {
  readonly name: 'node' | 'portable';
  /** `reused`: the secret is a long-lived one (a recipient's), worth keeping imported. */
  x25519PublicKey(secret: Uint8Array, reused?: boolean): Uint8Array;
  /** Raw X25519; a small-order peer key yields all zeros (never throws for a 32-byte input). */
  x25519(secret: Uint8Array, publicKey: Uint8Array, reused?: boolean): Uint8Array;
  aesGcmSeal(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    plaintext: Uint8Array,
  ): { ciphertext: Uint8Array; tag: Uint8Array };
  /** `undefined` when the tag does not verify. */
  aesGcmOpen(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    ciphertext: Uint8Array,
    tag: Uint8Array,
  ): Uint8Array | undefined;
  sha256(data: Uint8Array): Uint8Array;
  /** Lowercase hex SHA-256 of a string's UTF-8 bytes (node hashes it in one native call). */
  sha256Hex(text: string): string;
  /** True when `text` is canonical padded standard base64 (decodes, and re-encodes to itself). */
  isBase64(text: string): boolean;
  /** Bytes of a string known to be ASCII (node copies it natively). */
  ascii(text: string): Uint8Array;
}
