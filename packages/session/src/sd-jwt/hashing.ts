// The SD-JWT library's hasher and salts, on this project's SHA-256 (node:crypto or noble): no
// Node-only crypto package, so it runs in browsers.
import { b64urlEncode, randomBytes, sha256, utf8 } from '@wmp/jcs-signing';

/** The library's hasher and salt generator shapes (its types package is not a dependency of ours). */
export type Hasher = (data: string | ArrayBuffer, alg: string) => Uint8Array;
export type SaltGenerator = (length: number) => string;

/** `_sd_alg` values we compute: SHA-256 only (the default and what every issuer we know uses). */
export const hasher: Hasher = (data, alg) => {
  if (alg.toLowerCase() !== 'sha-256') throw new Error('unsupported _sd_alg');
  return sha256(typeof data === 'string' ? utf8(data) : new Uint8Array(data));
};

/** 128-bit salts (RFC 9901 §4.2.1 recommends at least that). */
export const saltGenerator: SaltGenerator = (length) => b64urlEncode(randomBytes(Math.max(16, length)));
