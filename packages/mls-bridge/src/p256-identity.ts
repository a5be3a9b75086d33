import { p256 } from '@noble/curves/nist.js';
import { MlsBridgeError } from './errors.js';
import type { MlsIdentity } from './identity.js';
import { didJwkFromP256PublicKey } from './p256.js';

/** A P-256 identity for suite 0x0002 from a 32-byte secret scalar; its DID is the did:jwk of its key. */
export function p256IdentityFromSecret(secret: Uint8Array): MlsIdentity {
  if (!(secret instanceof Uint8Array) || !p256.utils.isValidSecretKey(secret)) {
    throw new MlsBridgeError('invalid_identity');
  }
  const copy = secret.slice();
  const publicKey = p256.getPublicKey(copy, true);
  return Object.freeze({ did: didJwkFromP256PublicKey(publicKey), publicKey, exportSeed: () => copy.slice() });
}

/** A fresh random P-256 identity for suite 0x0002. */
export function generateP256Identity(): MlsIdentity {
  return p256IdentityFromSecret(p256.utils.randomSecretKey());
}
