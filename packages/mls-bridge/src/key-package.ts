import { b64urlEncode, timingSafeEqual } from '@wmp/jcs-signing';
import { type CipherSuiteId, cipherSuiteIdOf, cipherSuiteImpl, leafCapabilities } from './cipher-suites.js';
import { MlsBridgeError } from './errors.js';
import { credentialFor, credentialMatchesKey, identityOf } from './identity.js';
import {
  generateKeyPackageWithKey,
  type KeyPackage,
  makeKeyPackageRef,
  type PrivateKeyPackage,
  verifyKeyPackage as verifyKeyPackageSignature,
  verifyLeafNodeSignatureKeyPackage,
} from './ts-mls.js';
import { decodeMessage, encodeMessage } from './wire.js';

/** Key packages are valid for 30 days (tables §8), from a few minutes back to absorb clock skew. */
export const KEY_PACKAGE_LIFETIME_SECONDS = 30 * 24 * 3600;
const CLOCK_SKEW_SECONDS = 300;

/** A key package as published (`ohan.mls.keypackage.publish`): the fields a relay stores. */
export interface PublishedKeyPackage {
  /** The MLSMessage (wire format `mls_key_package`), base64url without padding. */
  readonly keyPackage: string;
  readonly cipherSuite: CipherSuiteId;
  /** The KeyPackageRef (RFC 9420 §5.2), base64url: how a Welcome names its recipient. */
  readonly ref: string;
  /** End of the lifetime, ISO 8601. */
  readonly expires: string;
}

/** What `verifyKeyPackage` vouches for. */
export interface VerifiedKeyPackage {
  /** The DID in the basic credential, bound to the leaf's signature key. */
  readonly identity: string;
  readonly cipherSuite: CipherSuiteId;
  readonly ref: string;
  readonly expires: string;
}

/** A key package we generated, with its private keys (kept until its Welcome arrives). */
export interface OwnKeyPackage {
  readonly published: PublishedKeyPackage;
  readonly publicPackage: KeyPackage;
  readonly privatePackage: PrivateKeyPackage;
}

export async function generateOwnKeyPackage(
  did: string,
  publicKey: Uint8Array,
  seed: Uint8Array,
  suite: CipherSuiteId,
  lifetimeSeconds: number,
  now = Date.now(),
): Promise<OwnKeyPackage> {
  const cs = await cipherSuiteImpl(suite);
  const nowSeconds = BigInt(Math.floor(now / 1000));
  const lifetime = {
    notBefore: nowSeconds - BigInt(CLOCK_SKEW_SECONDS),
    notAfter: nowSeconds + BigInt(lifetimeSeconds),
  };
  const { publicPackage, privatePackage } = await generateKeyPackageWithKey(
    credentialFor(did),
    leafCapabilities(),
    lifetime,
    [],
    { signKey: seed, publicKey },
    cs,
  );
  return { published: await describe(publicPackage, suite), publicPackage, privatePackage };
}

async function describe(kp: KeyPackage, suite: CipherSuiteId): Promise<PublishedKeyPackage> {
  const cs = await cipherSuiteImpl(suite);
  const notAfter = kp.leafNode.leafNodeSource === 'key_package' ? kp.leafNode.lifetime.notAfter : 0n;
  return {
    keyPackage: encodeMessage({ version: 'mls10', wireformat: 'mls_key_package', keyPackage: kp }),
    cipherSuite: suite,
    ref: b64urlEncode(await makeKeyPackageRef(kp, cs.hash)),
    expires: isoSeconds(notAfter),
  };
}

function isoSeconds(seconds: bigint): string {
  // Lifetimes may say "forever" (2^63-1); Date stops at year 275760.
  const max = 8_640_000_000_000n;
  return new Date(Number(seconds > max ? max : seconds) * 1000).toISOString();
}

/**
 * Decodes a published key package and checks everything that does not need a group: a suite we
 * run (and `expectedSuite` when given), the key package and leaf signatures, the lifetime, distinct
 * init and encryption keys, and the credential binding (a basic credential whose DID names the
 * leaf's signature key). Throws `malformed`, `unsupported_cipher_suite`, `invalid_key_package` or
 * `credential_mismatch`.
 */
export async function readKeyPackage(
  text: string,
  expectedSuite?: CipherSuiteId,
  now = Date.now(),
): Promise<{ keyPackage: KeyPackage; info: VerifiedKeyPackage }> {
  const kp = decodeMessage(text, 'mls_key_package').keyPackage;
  const suite = cipherSuiteIdOf(kp.cipherSuite);
  if (suite === undefined) throw new MlsBridgeError('unsupported_cipher_suite');
  if (expectedSuite !== undefined && suite !== expectedSuite) throw new MlsBridgeError('invalid_key_package');
  const cs = await cipherSuiteImpl(suite);
  const leaf = kp.leafNode;
  if (kp.version !== 'mls10' || leaf.leafNodeSource !== 'key_package') throw new MlsBridgeError('invalid_key_package');
  let signed: boolean;
  try {
    signed =
      (await verifyKeyPackageSignature(kp, cs.signature)) &&
      (await verifyLeafNodeSignatureKeyPackage(leaf, cs.signature));
  } catch (e) {
    throw new MlsBridgeError('invalid_key_package', { cause: e });
  }
  if (!signed) throw new MlsBridgeError('invalid_key_package');
  const nowSeconds = BigInt(Math.floor(now / 1000));
  if (leaf.lifetime.notBefore > nowSeconds || leaf.lifetime.notAfter < nowSeconds) {
    throw new MlsBridgeError('invalid_key_package');
  }
  if (timingSafeEqual(kp.initKey, leaf.hpkePublicKey)) throw new MlsBridgeError('invalid_key_package');
  // Self-signed only proves possession of *a* key: the credential must name that very key.
  if (!credentialMatchesKey(leaf.credential, leaf.signaturePublicKey, suite)) {
    throw new MlsBridgeError('credential_mismatch');
  }
  const { ref, expires } = await describe(kp, suite);
  return { keyPackage: kp, info: { identity: identityOf(leaf.credential)!, cipherSuite: suite, ref, expires } };
}

/**
 * Checks a key package someone published (see `readKeyPackage`) and returns whom it binds: what a
 * relay runs on `ohan.mls.keypackage.publish`, and what `MlsGroup.add` runs before adding.
 */
export async function verifyKeyPackage(
  text: string,
  options: { cipherSuite?: CipherSuiteId; now?: number } = {},
): Promise<VerifiedKeyPackage> {
  return (await readKeyPackage(text, options.cipherSuite, options.now)).info;
}
