import { MlsBridgeError } from './errors.js';
import {
  type Capabilities,
  type CiphersuiteImpl,
  type CiphersuiteName,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  nobleCryptoProvider,
} from './ts-mls.js';

/** The MLS cipher suites of the WMP binding (tables §8): 0x0001 is required, 0x0002 recommended. */
export type CipherSuiteId = 1 | 2;

/** Suite ids in order of preference, as offered in `security.cipher_suites`. */
export const SUPPORTED_CIPHER_SUITES: readonly CipherSuiteId[] = Object.freeze([1, 2]);

const NAMES: Readonly<Record<CipherSuiteId, CiphersuiteName>> = {
  1: 'MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519',
  2: 'MLS_128_DHKEMP256_AES128GCM_SHA256_P256',
};

/** The signature algorithm of each suite: what the member's DID key must be. */
export const SIGNATURE_ALGORITHM: Readonly<Record<CipherSuiteId, 'Ed25519' | 'P-256'>> = {
  1: 'Ed25519',
  2: 'P-256',
};

export function isSupportedCipherSuite(id: unknown): id is CipherSuiteId {
  return id === 1 || id === 2;
}

export function cipherSuiteName(id: CipherSuiteId): CiphersuiteName {
  return NAMES[id];
}

/** The suite id of a ts-mls suite name, or undefined for a suite we do not run. */
export function cipherSuiteIdOf(name: CiphersuiteName): CipherSuiteId | undefined {
  if (name === NAMES[1]) return 1;
  if (name === NAMES[2]) return 2;
  return undefined;
}

// getCiphersuiteImpl costs milliseconds (it builds HPKE and imports the curves): one per suite,
// shared by every client. The promise is cached, so concurrent first calls build it once.
const impls = new Map<CipherSuiteId, Promise<CiphersuiteImpl>>();

/**
 * The ts-mls implementation of a suite on the noble provider: pure JavaScript apart from
 * Web Crypto where present, so the same code runs in wallets and browsers (README).
 */
export function cipherSuiteImpl(id: CipherSuiteId): Promise<CiphersuiteImpl> {
  if (!isSupportedCipherSuite(id)) return Promise.reject(new MlsBridgeError('unsupported_cipher_suite'));
  let impl = impls.get(id);
  if (!impl) {
    impl = getCiphersuiteImpl(getCiphersuiteFromName(NAMES[id]), nobleCryptoProvider);
    impl.catch(() => impls.delete(id));
    impls.set(id, impl);
  }
  return impl;
}

/**
 * What our leaves advertise. ts-mls's `defaultCapabilities()` lists all 19 suites, x509 and GREASE,
 * including suites whose optional dependencies are absent; we list what we can actually run and
 * the only credential type we accept.
 */
export function leafCapabilities(): Capabilities {
  return {
    versions: ['mls10'],
    ciphersuites: [NAMES[1], NAMES[2]],
    extensions: [],
    proposals: [],
    credentials: ['basic'],
  };
}
