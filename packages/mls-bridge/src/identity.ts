import { ed25519 } from '@noble/curves/ed25519.js';
import {
  didJwkFromPublicKey,
  fromUtf8,
  publicKeyFromDidJwk,
  publicKeyFromDidKey,
  timingSafeEqual,
  utf8,
} from '@wmp/jcs-signing';
import type { CipherSuiteId } from './cipher-suites.js';
import { MlsBridgeError } from './errors.js';
import { didJwkFromP256PublicKey, p256KeyFromDidJwk, p256PublicKey, sameP256Key } from './p256.js';
import type { AuthenticationService, Credential } from './ts-mls.js';

/**
 * Who a client is in MLS: a DID and the private key its MLS leaf signs with. A jcs-signing
 * `Keypair` is one (Ed25519, suite 0x0001): the participant's own key is its MLS signature key.
 * For suite 0x0002 use `generateP256Identity()`.
 */
export interface MlsIdentity {
  /** A bare `did:key` or `did:jwk` (no fragment) naming `publicKey`. */
  readonly did: string;
  /** The signature public key: 32 bytes Ed25519, or SEC1 P-256. */
  readonly publicKey: Uint8Array;
  /** The private key: the 32-byte Ed25519 seed (RFC 8032) or the P-256 scalar. */
  exportSeed(): Uint8Array;
}

const MAX_IDENTITY_BYTES = 1024;

/** The basic credential carrying a DID. */
export function credentialFor(did: string): Credential {
  return { credentialType: 'basic', identity: utf8(did) };
}

/** The identity of a basic credential as text, or undefined (x509, not UTF-8, too long). */
export function identityOf(credential: Credential): string | undefined {
  if (credential.credentialType !== 'basic') return undefined;
  if (credential.identity.length === 0 || credential.identity.length > MAX_IDENTITY_BYTES) return undefined;
  try {
    return fromUtf8(credential.identity);
  } catch {
    return undefined;
  }
}

/**
 * The signature key a DID names under a suite, or undefined when the DID cannot name one here:
 * suite 0x0001 takes Ed25519 `did:key` / `did:jwk`, suite 0x0002 a P-256 `did:jwk`. A DID URL with a
 * fragment, query or path, or a did:jwk in another JSON form, is refused, so that one member has
 * one spelling (what `members` lists and `wmp.sender` is compared with).
 */
export function signatureKeyOfDid(did: string, suite: CipherSuiteId): Uint8Array | undefined {
  if (typeof did !== 'string' || /[#?/]/.test(did)) return undefined;
  // did:jwk must be in its canonical form (the JCS of the bare public JWK), as did:key always is.
  if (suite === 2) {
    const key = p256KeyFromDidJwk(did);
    return key && didJwkFromP256PublicKey(key) === did ? key : undefined;
  }
  try {
    if (did.startsWith('did:key:')) return publicKeyFromDidKey(did);
    if (did.startsWith('did:jwk:')) {
      const key = publicKeyFromDidJwk(did);
      return didJwkFromPublicKey(key) === did ? key : undefined;
    }
  } catch {
    // InvalidKeyError: not a usable Ed25519 key (malformed, weak, private part).
  }
  return undefined;
}

/** Whether `credential` is a basic credential whose DID names exactly `signaturePublicKey`. */
export function credentialMatchesKey(
  credential: Credential,
  signaturePublicKey: Uint8Array,
  suite: CipherSuiteId,
): boolean {
  const did = identityOf(credential);
  if (did === undefined) return false;
  const key = signatureKeyOfDid(did, suite);
  if (key === undefined) return false;
  return suite === 2 ? sameP256Key(key, signaturePublicKey) : timingSafeEqual(key, signaturePublicKey);
}

/**
 * The credential check ts-mls runs on create, join, add and every commit. ts-mls's default
 * accepts every credential; this one accepts only a member whose DID resolves to its signature key,
 * and refuses everything else (x509, other DID methods, other key types).
 */
export function didAuthenticationService(suite: CipherSuiteId): AuthenticationService {
  return {
    async validateCredential(credential, signaturePublicKey) {
      return credentialMatchesKey(credential, signaturePublicKey, suite);
    },
  };
}

/**
 * Checks an identity before we publish key packages for it: the DID must name the public key and
 * the private key must produce it, otherwise our own key packages would be refused by every peer.
 */
export function assertUsableIdentity(identity: MlsIdentity, suite: CipherSuiteId): Uint8Array {
  const seed = identity.exportSeed();
  const expected = signatureKeyOfDid(identity.did, suite);
  if (!expected || !(seed instanceof Uint8Array) || seed.length !== 32) throw new MlsBridgeError('invalid_identity');
  if (suite === 1) {
    if (!timingSafeEqual(ed25519.getPublicKey(seed), expected) || !timingSafeEqual(identity.publicKey, expected)) {
      throw new MlsBridgeError('invalid_identity');
    }
  } else if (!sameP256Key(p256PublicKey(seed), expected) || !sameP256Key(identity.publicKey, expected)) {
    throw new MlsBridgeError('invalid_identity');
  }
  return seed;
}
