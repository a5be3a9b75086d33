import { SessionError } from '../errors.js';
import type { JwsAlgorithm, JwsSigner } from './jws.js';
import { decodeJws, importParams, importVerifyKey, signJws, verifyDecodedJws, webCryptoSigner } from './jws.js';
import {
  asciiLowerCase,
  CertificateParseError,
  checkLeafIdentity,
  encodeBase64,
  leafInfo,
  parseCertificateDer,
  pemBlocks,
} from './x509.js';

/**
 * An identity proven by an X.509 certificate: what a WmpSession needs to authenticate with `x5c`
 * and what a responder needs for `x5c` mutual authentication.
 */
export interface X509Identity {
  /** `x509:san:dns:...`, `x509:san:uri:...` or `x509:sha256:...`, proven by the leaf. */
  readonly id: string;
  /** The chain as sent: standard base64 DER, leaf first. */
  readonly x5c: readonly string[];
  /** Signs with the leaf's private key. */
  readonly signer: JwsSigner;
}

export interface X509IdentityOptions {
  /** PEM: the leaf first, then the intermediates (the root may follow; it is sent too). */
  readonly certificatesPem: string;
  /** PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`) of the leaf's key; unencrypted. */
  readonly privateKeyPem: string;
  /**
   * Default: `x509:san:dns:` + the first dNSName SAN that is no wildcard (lower-case), else
   * `x509:san:uri:` + the first URI SAN, else the fingerprint.
   */
  readonly id?: string;
  /** For an RSA key, default PS256. */
  readonly rsaAlgorithm?: 'PS256' | 'RS256';
}

/** What is wrong with our own certificate or key (never a peer's). */
export type X509IdentityFailure =
  | 'bad_pem'
  | 'no_certificate'
  | 'no_private_key'
  | 'not_a_certificate'
  | 'identity_not_proved'
  | 'unsupported_key'
  | 'key_type_mismatch'
  | 'key_mismatch'
  | 'not_a_message_signing_key';

const IDENTITY_MESSAGES: Readonly<Record<X509IdentityFailure, string>> = {
  bad_pem: 'certificatesPem or privateKeyPem is not valid PEM',
  no_certificate: 'no CERTIFICATE in certificatesPem',
  no_private_key: 'privateKeyPem must hold a PKCS#8 PRIVATE KEY',
  not_a_certificate: 'certificatesPem holds something that is not a certificate',
  identity_not_proved: 'the leaf certificate does not prove the identifier',
  unsupported_key: 'the leaf key is not Ed25519, P-256, P-384 or RSA',
  key_type_mismatch: 'privateKeyPem is not a key of the leaf certificate’s type',
  key_mismatch: 'privateKeyPem is not the key of the leaf certificate',
  not_a_message_signing_key: 'message signatures need a P-256 or Ed25519 leaf key',
};

/** A problem with our own certificate or key; `reason` says which, `cause` what lay beneath. */
export class X509IdentityError extends SessionError {
  declare readonly code: 'ERR_X509_IDENTITY';
  readonly reason: X509IdentityFailure;
  constructor(reason: X509IdentityFailure, options?: { cause?: unknown }) {
    super('ERR_X509_IDENTITY', IDENTITY_MESSAGES[reason], options);
    this.name = 'X509IdentityError';
    this.reason = reason;
  }
}

/**
 * Loads an X.509 identity: the certificates, the leaf's PKCS#8 key (checked to be the leaf's by a
 * test signature) and the identifier the leaf proves. Browser-safe (WebCrypto).
 */
export async function x509Identity(options: X509IdentityOptions): Promise<X509Identity> {
  let ders: Uint8Array[];
  let keyDer: Uint8Array | undefined;
  try {
    ders = pemBlocks(options.certificatesPem, 'CERTIFICATE', 10);
    keyDer = pemBlocks(options.privateKeyPem, 'PRIVATE KEY', 1)[0];
  } catch (e) {
    if (e instanceof CertificateParseError) throw new X509IdentityError('bad_pem', { cause: e });
    throw e;
  }
  if (ders.length === 0) throw new X509IdentityError('no_certificate');
  if (!keyDer) throw new X509IdentityError('no_private_key');
  let leaf: Awaited<ReturnType<typeof leafInfo>>;
  try {
    leaf = await leafInfo(parseCertificateDer(ders[0]!));
    for (const der of ders.slice(1)) parseCertificateDer(der);
  } catch (e) {
    if (e instanceof CertificateParseError) throw new X509IdentityError('not_a_certificate', { cause: e });
    throw e;
  }
  const dnsName = leaf.dnsNames.find((n) => !n.includes('*'));
  const id =
    options.id ??
    (dnsName !== undefined
      ? `x509:san:dns:${asciiLowerCase(dnsName)}`
      : leaf.uris[0] !== undefined
        ? `x509:san:uri:${leaf.uris[0]}`
        : `x509:sha256:${leaf.sha256}`);
  try {
    checkLeafIdentity(id, leaf);
  } catch {
    throw new X509IdentityError('identity_not_proved');
  }
  const key = leaf.key;
  const alg: JwsAlgorithm | undefined =
    key?.kty === 'OKP'
      ? 'EdDSA'
      : key?.kty === 'EC'
        ? key.crv === 'P-256'
          ? 'ES256'
          : 'ES384'
        : key?.kty === 'RSA'
          ? (options.rsaAlgorithm ?? 'PS256')
          : undefined;
  if (!alg) throw new X509IdentityError('unsupported_key');
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey(
      'pkcs8',
      keyDer as Uint8Array<ArrayBuffer>,
      importParams(alg) as Algorithm,
      false,
      ['sign'],
    );
  } catch {
    throw new X509IdentityError('key_type_mismatch');
  }
  const signer = webCryptoSigner(privateKey, alg);
  // The key must be the leaf's: sign once and verify with the certificate.
  const probe = new TextEncoder().encode('wmp x509 identity check');
  const jws = await signJws(probe, signer);
  try {
    await verifyDecodedJws(decodeJws(jws), probe, await importVerifyKey(alg, 'spki', leaf.spki));
  } catch {
    throw new X509IdentityError('key_mismatch');
  }
  return { id, x5c: ders.map(encodeBase64), signer };
}
