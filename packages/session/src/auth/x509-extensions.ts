import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * What the chain rules read of a certificate, always from the extensions as pkijs parsed them
 * (never our own ASN.1): basicConstraints, keyUsage, extKeyUsage, nameConstraints, and whether a
 * critical extension is one that validation processes (RFC 5280 §4.2).
 */

export const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  nameConstraints: '2.5.29.30',
  ecPublicKey: '1.2.840.10045.2.1',
  p256: '1.2.840.10045.3.1.7',
  p384: '1.3.132.0.34',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ed25519: '1.3.101.112',
} as const;

/**
 * What a leaf is for: a sender's certificate (`clientAuth`), a responder's, such as a relay's
 * (`serverAuth`), or a time-stamping authority's (`timeStamping`, RFC 3161 §2.3).
 */
export type CertificatePurpose = 'clientAuth' | 'serverAuth' | 'timeStamping';

const PURPOSE_OIDS: Readonly<Record<CertificatePurpose, string>> = {
  clientAuth: '1.3.6.1.5.5.7.3.2',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  timeStamping: '1.3.6.1.5.5.7.3.8',
};

/**
 * Critical extensions that validation processes: ours (basicConstraints, keyUsage, extKeyUsage,
 * subjectAltName) and pkijs's path validation (nameConstraints, the policy extensions), plus the
 * key identifiers that only help find an issuer. Any other critical one refuses the certificate.
 */
const PROCESSED = new Set<string>([
  OID.basicConstraints,
  OID.keyUsage,
  OID.extKeyUsage,
  OID.subjectAltName,
  OID.nameConstraints,
  '2.5.29.32', // certificatePolicies
  '2.5.29.33', // policyMappings
  '2.5.29.36', // policyConstraints
  '2.5.29.54', // inhibitAnyPolicy
  '2.5.29.14', // subjectKeyIdentifier
  '2.5.29.35', // authorityKeyIdentifier
]);

/** A certificate's extension of that OID, if it has one. */
export function extension(cert: pkijs.Certificate, oid: string): pkijs.Extension | undefined {
  return cert.extensions?.find((e) => e.extnID === oid);
}

/** pkijs marks a known extension whose value did not parse with `parsingError` instead of throwing. */
function parsedOrThrow<T>(ext: pkijs.Extension, type: abstract new (...args: never[]) => T): T {
  const value = ext.parsedValue as unknown;
  if (!(value instanceof type) || (value as { parsingError?: unknown }).parsingError !== undefined) {
    throw new Error('malformed extension');
  }
  return value;
}

export function isCa(cert: pkijs.Certificate): boolean {
  const ext = extension(cert, OID.basicConstraints);
  return ext !== undefined && parsedOrThrow(ext, pkijs.BasicConstraints).cA === true;
}

/** basicConstraints pathLenConstraint, or undefined for none (a value too large to read is no limit). */
export function pathLength(cert: pkijs.Certificate): number | undefined {
  const ext = extension(cert, OID.basicConstraints);
  if (ext === undefined) return undefined;
  const limit = parsedOrThrow(ext, pkijs.BasicConstraints).pathLenConstraint;
  return typeof limit === 'number' ? limit : undefined;
}

/** keyUsage digitalSignature (bit 0) when keyUsage is present; true without it. */
export function maySign(cert: pkijs.Certificate): boolean {
  const ext = extension(cert, OID.keyUsage);
  if (!ext) return true;
  const bits = ext.parsedValue;
  if (!(bits instanceof asn1js.BitString)) return false;
  const first = bits.valueBlock.valueHexView[0];
  return first !== undefined && (first & 0x80) !== 0;
}

/**
 * Whether extKeyUsage allows `purpose`: true without the extension, else only when it lists that
 * purpose (`anyExtendedKeyUsage` alone does not do: RFC 5280 §4.2.1.12 lets an application that
 * needs a purpose refuse it, and openssl does).
 */
export function allowsPurpose(cert: pkijs.Certificate, purpose: CertificatePurpose): boolean {
  const ext = extension(cert, OID.extKeyUsage);
  if (ext === undefined) return true;
  return parsedOrThrow(ext, pkijs.ExtKeyUsage).keyPurposes.includes(PURPOSE_OIDS[purpose]);
}

/**
 * RFC 3161 §2.3: a TSA's certificate has exactly one extKeyUsage, critical, listing
 * `timeStamping` and nothing else.
 */
export function isTimeStampingOnly(cert: pkijs.Certificate): boolean {
  const found = (cert.extensions ?? []).filter((e) => e.extnID === OID.extKeyUsage);
  if (found.length !== 1 || found[0]!.critical !== true) return false;
  const purposes = parsedOrThrow(found[0]!, pkijs.ExtKeyUsage).keyPurposes;
  return purposes.length === 1 && purposes[0] === PURPOSE_OIDS.timeStamping;
}

/** Whether the certificate has a critical extension that validation does not process. */
export function hasUnprocessedCritical(cert: pkijs.Certificate): boolean {
  return (cert.extensions ?? []).some((e) => e.critical && !PROCESSED.has(e.extnID));
}

/** The GeneralName forms (pkijs `type`) of a certificate's permitted subtrees. */
export function permittedNameForms(cert: pkijs.Certificate): Set<number> {
  const ext = extension(cert, OID.nameConstraints);
  if (ext === undefined) return new Set();
  const permitted = parsedOrThrow(ext, pkijs.NameConstraints).permittedSubtrees ?? [];
  return new Set(permitted.map((s) => s.base.type));
}

/** A certificate's nameConstraints as pkijs's path validation takes them for a trust anchor. */
export function nameConstraintsOf(
  cert: pkijs.Certificate,
): { permitted: pkijs.GeneralSubtree[]; excluded: pkijs.GeneralSubtree[] } | undefined {
  const ext = extension(cert, OID.nameConstraints);
  if (ext === undefined) return undefined;
  const nc = parsedOrThrow(ext, pkijs.NameConstraints);
  return { permitted: nc.permittedSubtrees ?? [], excluded: nc.excludedSubtrees ?? [] };
}
