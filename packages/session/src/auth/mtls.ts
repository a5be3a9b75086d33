import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import type { Authenticator } from './authenticator.js';
import { authFailure } from './reasons.js';
import { schemeOf } from './schemes.js';
import { X509_SCHEMES } from './x5c.js';
import {
  CertificateParseError,
  checkLeafIdentity,
  DEFAULT_MAX_CERTIFICATE_BYTES,
  DEFAULT_MAX_CERTIFICATES,
  type LeafInfo,
  leafInfo,
  type ParsedCertificate,
  parseCertificateDer,
  parseTrustAnchors,
  type TrustAnchors,
  type X5cLimits,
} from './x509.js';
import { type AssuranceAnchors, chainAssurance, parseAssuranceTiers } from './x509-assurance.js';
import { validateChain } from './x509-chain.js';

export interface MtlsOptions extends X5cLimits {
  /**
   * The CAs client certificates must chain to (PEM text or DER): the same ones the TLS server asks
   * for (`--tls-client-ca`). The chain is validated here again, with the x5c rules.
   */
  readonly trustAnchors: TrustAnchors;
  /** Schemes to declare, default x509:san:dns, x509:san:uri, x509:sha256. */
  readonly schemes?: readonly string[];
  /** Anchors whose chains the operator rates at a level (core §3.5.1), highest first. */
  readonly assuranceAnchors?: readonly AssuranceAnchors[];
}

/** The presented chain within the limits; anything else is `untrusted_chain`. */
function parseChain(ders: readonly Uint8Array[] | undefined, limits: X5cLimits): ParsedCertificate[] {
  if (ders === undefined || ders.length === 0) throw authFailure('untrusted_chain', 'no_client_certificate');
  if (ders.length > (limits.maxCertificates ?? DEFAULT_MAX_CERTIFICATES)) {
    throw authFailure('untrusted_chain', 'chain_too_long');
  }
  const maxBytes = limits.maxCertificateBytes ?? DEFAULT_MAX_CERTIFICATE_BYTES;
  return ders.map((der) => {
    if (der.byteLength > maxBytes) throw authFailure('untrusted_chain', 'certificate_too_large');
    try {
      return parseCertificateDer(der);
    } catch (e) {
      if (e instanceof CertificateParseError) throw authFailure('untrusted_chain', 'malformed_certificate');
      throw e;
    }
  });
}

/**
 * `mtls` (core §4.4.2, §4.4.7): inline at create, `auth: {type: 'mtls'}`. The proof is the TLS
 * client certificate of the connection (the handshake proved the key; the binding hands the chain
 * over as `peerCertificates`): it must chain to a trust anchor with the same RFC 5280 rules as
 * `x5c` (clientAuth when it has an extKeyUsage), and the sender must be one of the leaf's SANs or
 * its fingerprint. A connection without a client certificate is `untrusted_chain`
 * (`no_client_certificate`).
 */
export function mtlsAuthenticator(options: MtlsOptions): Authenticator {
  const anchors = parseTrustAnchors(options.trustAnchors);
  const tiers = parseAssuranceTiers(options.assuranceAnchors);
  return {
    needsChallenge: false,
    schemes: options.schemes ?? X509_SCHEMES,
    async authenticate(attempt) {
      const sender = attempt.sender;
      if (sender === undefined) throw new NotAuthorizedError({ reason: 'sender required' });
      if (!X509_SCHEMES.includes(schemeOf(sender))) throw authFailure('unsupported_scheme');
      const chain = parseChain(attempt.peerCertificates, options);
      let leaf: LeafInfo;
      try {
        leaf = await leafInfo(chain[0]!);
      } catch {
        throw authFailure('untrusted_chain', 'malformed_certificate');
      }
      checkLeafIdentity(sender, leaf);
      // A client certificate: clientAuth when it has an extKeyUsage (a server's certificate is not one).
      // A CA the TLS layer appended is an anchor: validateChain skips it.
      await validateChain(chain, anchors, attempt.now, { purpose: 'clientAuth' });
      const assurance = await chainAssurance(chain, tiers, attempt.now, 'clientAuth');
      return assurance === undefined ? sender : { identity: sender, assurance };
    },
  };
}
