import * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { OIDS, sameBytes } from './token.js';

/**
 * The ESS signing-certificate attribute (RFC 3161 §2.4.1, RFC 2634 §5.4, RFC 5035): the TSA signs
 * the hash of its own certificate, so another certificate with the same key cannot be claimed.
 */

const HASHES: Readonly<Record<string, string>> = {
  [OIDS.sha256]: 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};

/** The first ESSCertID(v2) of the attribute: its hash algorithm (WebCrypto name) and hash. */
function firstCertId(attribute: pkijs.Attribute, v2: boolean): { hash: string; certHash: Uint8Array } | undefined {
  const value = attribute.values[0];
  if (!(value instanceof asn1js.Sequence)) return undefined;
  const certs = value.valueBlock.value[0];
  if (!(certs instanceof asn1js.Sequence)) return undefined;
  const first = certs.valueBlock.value[0];
  if (!(first instanceof asn1js.Sequence)) return undefined;
  const [a, b] = first.valueBlock.value;
  if (!v2)
    return a instanceof asn1js.OctetString
      ? { hash: 'SHA-1', certHash: new Uint8Array(a.valueBlock.valueHexView) }
      : undefined;
  if (a instanceof asn1js.OctetString) return { hash: 'SHA-256', certHash: new Uint8Array(a.valueBlock.valueHexView) };
  if (!(a instanceof asn1js.Sequence) || !(b instanceof asn1js.OctetString)) return undefined;
  const oid = a.valueBlock.value[0];
  const hash = oid instanceof asn1js.ObjectIdentifier ? HASHES[oid.valueBlock.toString()] : undefined;
  return hash === undefined ? undefined : { hash, certHash: new Uint8Array(b.valueBlock.valueHexView) };
}

/**
 * `missing` when the signer has no signing-certificate attribute (or one we cannot read),
 * `mismatch` when it names another certificate than `certificateDer`, undefined when it names it.
 */
export async function checkSigningCertificate(
  signerInfo: pkijs.SignerInfo,
  certificateDer: Uint8Array,
): Promise<'missing' | 'mismatch' | undefined> {
  const attributes = signerInfo.signedAttrs?.attributes ?? [];
  const v2 = attributes.find((a) => a.type === OIDS.signingCertificateV2);
  const v1 = attributes.find((a) => a.type === OIDS.signingCertificate);
  const id = v2 ? firstCertId(v2, true) : v1 ? firstCertId(v1, false) : undefined;
  if (id === undefined) return 'missing';
  const digest = new Uint8Array(await crypto.subtle.digest(id.hash, certificateDer as Uint8Array<ArrayBuffer>));
  return sameBytes(digest, id.certHash) ? undefined : 'mismatch';
}
