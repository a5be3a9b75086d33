/** The primitives that differ between the Node fast path and the portable (browser) path. */
export interface CryptoBackend {
  readonly name: 'node' | 'portable';
  /** The Ed25519 public key of a 32-byte seed. */
  ed25519PublicKey(seed: Uint8Array): Uint8Array;
  /** A signing function bound to a seed (keys are imported once). */
  ed25519Signer(seed: Uint8Array): (message: Uint8Array) => Uint8Array;
  /** Strict RFC 8032 verification; never throws, a malformed input is `false`. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  /**
   * ES256 (ECDSA P-256 over SHA-256) verification of a JWS signature (`r || s`, 64 bytes) with an
   * uncompressed SEC1 point (65 bytes); high-S is accepted as WebCrypto and OpenSSL make it. Never
   * throws: a malformed input or a point off the curve is `false`.
   */
  p256Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  sha256(data: Uint8Array): Uint8Array;
}
