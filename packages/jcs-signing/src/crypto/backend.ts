/** The primitives that differ between the Node fast path and the portable (browser) path. */
export interface CryptoBackend {
  readonly name: 'node' | 'portable';
  /** The Ed25519 public key of a 32-byte seed. */
  ed25519PublicKey(seed: Uint8Array): Uint8Array;
  /** A signing function bound to a seed (keys are imported once). */
  ed25519Signer(seed: Uint8Array): (message: Uint8Array) => Uint8Array;
  /** Strict RFC 8032 verification; never throws, a malformed input is `false`. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  sha256(data: Uint8Array): Uint8Array;
}
