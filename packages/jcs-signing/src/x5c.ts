import type { Signer } from './keypair.js';

/**
 * X.509 signers for the detached JWS of this package. The chain itself is checked elsewhere: this
 * package has no X.509 code, so a verifier of chains (`x5cSignatureVerifier` of
 * `@wmp/session/x509`, RFC 5280 path validation against trust anchors) is passed in.
 */

/** A key whose certificate chain goes in the JWS header (`x5c`): an X.509 identity. */
export interface X5cSigner {
  /** ES256 for a P-256 leaf, EdDSA for an Ed25519 leaf. */
  readonly alg: 'ES256' | 'EdDSA';
  /** `<identifier>#<key name>`: its identifier part is the identity the leaf proves. */
  readonly kid: string;
  /** Standard base64 DER, leaf first. */
  readonly x5c: readonly string[];
  /** The JWS signature of `data` (ES256: `r || s`, 64 bytes). */
  sign(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/** What signs a message: an Ed25519 `Signer` (did:key, did:jwk) or an `X5cSigner`. */
export type MessageSigner = Signer | X5cSigner;

/** The key of a chain's leaf, for the signature check. */
export interface X5cLeafKey {
  /** The algorithm the key signs with. */
  readonly alg: 'ES256' | 'EdDSA';
  /** Ed25519: 32 bytes; P-256: the uncompressed SEC1 point (65 bytes). */
  readonly publicKey: Uint8Array;
}

/** Checks an `x5c` chain: injected, so that this package loads no X.509 code. */
export interface X5cChainVerifier {
  /**
   * Resolves with the leaf's key when `x5c` chains to a trust anchor now and its leaf proves
   * `identifier`; rejects otherwise (a `WmpError` whose `data.reason` / `data.detail` say why
   * becomes the `detail` of -31010 `untrusted_chain`).
   */
  verify(x5c: readonly string[], identifier: string): Promise<X5cLeafKey>;
}

/** Certificates an `x5c` header may carry (RFC 7515 §4.1.6: leaf first, each standard base64 DER). */
export const MAX_X5C_CERTIFICATES = 10;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The header's `x5c` when it is a non-empty array of base64 strings within the bound; else undefined. */
export function parseX5cHeader(x5c: unknown): readonly string[] | undefined {
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_X5C_CERTIFICATES) return undefined;
  return x5c.every((c) => typeof c === 'string' && c.length % 4 === 0 && BASE64.test(c)) ? x5c : undefined;
}
