import type { X5cChainVerifier, X5cLeafKey, X5cSigner } from '@wmp/jcs-signing';

import { authFailure } from './reasons.js';
import {
  checkLeafIdentity,
  leafInfo,
  parseCertificateDer,
  parseTrustAnchors,
  parseX5c,
  type TrustAnchors,
  type X5cLimits,
} from './x509.js';
import { validateChain } from './x509-chain.js';
import type { CertificatePurpose } from './x509-extensions.js';
import { type X509Identity, X509IdentityError } from './x509-identity.js';

/**
 * Non-repudiation signatures by X.509 identities (core §5.4 with `x5c`): the chain check that
 * @wmp/jcs-signing's `verifyMessage` and `verifyRelayChain` take as `x5c`, and the `X5cSigner`
 * of an `X509Identity`. The same RFC 5280 rules as `x5c` authentication (`validateChain`).
 */

export interface X5cSignatureOptions extends X5cLimits {
  /** The trust anchors signers' certificates must chain to (PEM text or DER). */
  readonly trustAnchors: TrustAnchors;
  /** What the leaf must be for where it has an extKeyUsage; default `clientAuth` (a sender's certificate). */
  readonly purpose?: CertificatePurpose;
  readonly now?: () => number;
}

const ED25519_OID = '1.3.101.112';
const EC_OID = '1.2.840.10045.2.1';

/**
 * The chain verifier for signatures with an `x5c` header: the chain is parsed within the limits,
 * its leaf must prove the identifier (a SAN or the fingerprint, core §7.4) and chain to an anchor
 * now; the leaf's key is returned (P-256 for ES256, Ed25519 for EdDSA). A refusal is the -31002
 * `WmpError` of `x5c` authentication, which @wmp/jcs-signing reports as -31010
 * `untrusted_chain` with its reason as `detail`. Trust anchors are parsed here, once: a bad one
 * throws.
 */
export function x5cSignatureVerifier(options: X5cSignatureOptions): X5cChainVerifier {
  const anchors = parseTrustAnchors(options.trustAnchors);
  const purpose = options.purpose ?? 'clientAuth';
  const now = options.now ?? Date.now;
  return {
    async verify(x5c, identifier): Promise<X5cLeafKey> {
      const chain = parseX5c(x5c, options);
      const leaf = await leafInfo(chain[0]!).catch(() => {
        throw authFailure('untrusted_chain', 'malformed_certificate');
      });
      checkLeafIdentity(identifier, leaf);
      await validateChain(chain, anchors, now(), { purpose });
      const info = chain[0]!.cert.subjectPublicKeyInfo;
      const key = new Uint8Array(info.subjectPublicKey.valueBlock.valueHexView);
      if (leaf.key?.kty === 'EC' && leaf.key.crv === 'P-256' && info.algorithm.algorithmId === EC_OID) {
        return { alg: 'ES256', publicKey: key };
      }
      if (leaf.key?.kty === 'OKP' && info.algorithm.algorithmId === ED25519_OID)
        return { alg: 'EdDSA', publicKey: key };
      throw authFailure('unsupported_algorithm');
    },
  };
}

/**
 * The `X5cSigner` of an X.509 identity, for `signMessage`: ES256 for a P-256 leaf, EdDSA for an
 * Ed25519 one; its kid is `<id>#<SHA-256 of the leaf, hex>`. Throws `X509IdentityError` for
 * another key (message signatures are ES256 or EdDSA).
 */
export async function x509MessageSigner(identity: X509Identity): Promise<X5cSigner> {
  const alg = identity.signer.alg;
  if (alg !== 'ES256' && alg !== 'EdDSA') {
    throw new X509IdentityError('not_a_message_signing_key');
  }
  const first = identity.x5c[0];
  if (first === undefined) throw new X509IdentityError('no_certificate');
  const der = Uint8Array.from(atob(first), (c) => c.charCodeAt(0));
  const fingerprint = (await leafInfo(parseCertificateDer(der))).sha256;
  return {
    alg,
    kid: `${identity.id}#${fingerprint}`,
    x5c: identity.x5c,
    sign: (data) => identity.signer.sign(data),
  };
}
