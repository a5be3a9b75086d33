import { toHex } from '@wmp/jcs-signing';
import { WmpError } from '@wmp/jsonrpc-envelope';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { KeyDescription } from './jws.js';
import { authFailure } from './reasons.js';

/**
 * X.509 for `x5c` (DESIGN §10): parsing with bounds, chain building and validation with pkijs
 * (RFC 5280 path validation on WebCrypto; browser-safe), plus the checks WMP adds: every
 * certificate valid now, intermediates are CAs, the leaf may sign, and the sender is a SAN or the
 * SHA-256 fingerprint of the leaf. Revocation (CRL, OCSP) is not checked.
 */

/** Trust anchors: PEM text (any number of CERTIFICATE blocks), DER bytes, or a list of them. */
export type TrustAnchors = string | Uint8Array | readonly (string | Uint8Array)[];

export interface X5cLimits {
  /** Certificates in one `x5c`, default 10. */
  readonly maxCertificates?: number;
  /** Bytes of one certificate, default 16 KiB. */
  readonly maxCertificateBytes?: number;
}

export const DEFAULT_MAX_CERTIFICATES = 10;
export const DEFAULT_MAX_CERTIFICATE_BYTES = 16 * 1024;

/** A parsed certificate with the exact DER it came from. */
export interface ParsedCertificate {
  readonly der: Uint8Array;
  readonly cert: pkijs.Certificate;
}

/** A certificate that did not parse: the caller decides what that means (operator input or peer input). */
export class CertificateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateParseError';
  }
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeBase64(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (clean.length % 4 !== 0 || !B64.test(clean)) throw new CertificateParseError('not base64');
  const binary = atob(clean);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The DER of every `-----BEGIN <label>-----` block of a PEM text. */
export function pemBlocks(text: string, label: string, maxBlocks = 1000): Uint8Array[] {
  const re = new RegExp(`-----BEGIN ${label}-----([^-]*)-----END ${label}-----`, 'g');
  const out: Uint8Array[] = [];
  for (const m of text.matchAll(re)) {
    if (out.length >= maxBlocks) throw new CertificateParseError('too many PEM blocks');
    out.push(decodeBase64(m[1]!));
  }
  return out;
}

/** One certificate from its DER; the DER must be exactly one certificate (no trailing bytes). */
export function parseCertificateDer(der: Uint8Array): ParsedCertificate {
  let cert: pkijs.Certificate;
  try {
    const asn1 = asn1js.fromBER(der);
    if (asn1.offset === -1 || asn1.offset !== der.byteLength) throw new Error('trailing or bad BER');
    cert = new pkijs.Certificate({ schema: asn1.result });
  } catch {
    throw new CertificateParseError('not a certificate');
  }
  return { der, cert };
}

/** Operator trust anchors, parsed once (a bad one throws `CertificateParseError`). */
export function parseTrustAnchors(anchors: TrustAnchors): ParsedCertificate[] {
  const items = typeof anchors === 'string' || anchors instanceof Uint8Array ? [anchors] : anchors;
  const out: ParsedCertificate[] = [];
  for (const item of items) {
    const ders = typeof item === 'string' ? pemBlocks(item, 'CERTIFICATE') : [item];
    if (typeof item === 'string' && ders.length === 0) throw new CertificateParseError('no CERTIFICATE block');
    for (const der of ders) out.push(parseCertificateDer(der));
  }
  if (out.length === 0) throw new CertificateParseError('no trust anchors');
  return out;
}

/**
 * Parses a peer's `x5c` (standard base64 DER, leaf first) within the limits; any problem is
 * -31002 `untrusted_chain` with a `detail`, decided before any signature is checked.
 */
export function parseX5c(x5c: unknown, limits: X5cLimits = {}): ParsedCertificate[] {
  const maxCerts = limits.maxCertificates ?? DEFAULT_MAX_CERTIFICATES;
  const maxBytes = limits.maxCertificateBytes ?? DEFAULT_MAX_CERTIFICATE_BYTES;
  if (!Array.isArray(x5c) || x5c.length === 0) throw authFailure('untrusted_chain', 'x5c_required');
  if (x5c.length > maxCerts) throw authFailure('untrusted_chain', 'chain_too_long');
  const maxChars = Math.ceil(maxBytes / 3) * 4;
  for (const item of x5c) {
    if (typeof item !== 'string') throw authFailure('untrusted_chain', 'malformed_certificate');
    if (item.length > maxChars) throw authFailure('untrusted_chain', 'certificate_too_large');
  }
  return x5c.map((item: string) => {
    try {
      const der = decodeBase64(item);
      if (der.byteLength > maxBytes) throw authFailure('untrusted_chain', 'certificate_too_large');
      return parseCertificateDer(der);
    } catch (e) {
      if (e instanceof CertificateParseError) throw authFailure('untrusted_chain', 'malformed_certificate');
      throw e;
    }
  });
}

const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  ecPublicKey: '1.2.840.10045.2.1',
  p256: '1.2.840.10045.3.1.7',
  p384: '1.3.132.0.34',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ed25519: '1.3.101.112',
} as const;

function extension(cert: pkijs.Certificate, oid: string): pkijs.Extension | undefined {
  return cert.extensions?.find((e) => e.extnID === oid);
}

function isCa(cert: pkijs.Certificate): boolean {
  const bc = extension(cert, OID.basicConstraints)?.parsedValue;
  return bc instanceof pkijs.BasicConstraints && bc.cA === true;
}

/** keyUsage digitalSignature (bit 0) when keyUsage is present; true without it. */
function maySign(cert: pkijs.Certificate): boolean {
  const ext = extension(cert, OID.keyUsage);
  if (!ext) return true;
  const bits = ext.parsedValue;
  if (!(bits instanceof asn1js.BitString)) return false;
  const first = bits.valueBlock.valueHexView[0];
  return first !== undefined && (first & 0x80) !== 0;
}

function validity(cert: pkijs.Certificate, now: number): 'expired' | 'not_yet_valid' | undefined {
  if (cert.notAfter.value.getTime() < now) return 'expired';
  if (cert.notBefore.value.getTime() > now) return 'not_yet_valid';
  return undefined;
}

/** What WMP needs of a leaf: its names, fingerprint and key. */
export interface LeafInfo {
  readonly der: Uint8Array;
  /** Lowercase hex SHA-256 of the DER (`x509:sha256:`). */
  readonly sha256: string;
  readonly dnsNames: readonly string[];
  readonly uris: readonly string[];
  /** The key type, or undefined for a key we do not verify with. */
  readonly key: KeyDescription | undefined;
  /** SubjectPublicKeyInfo DER, for WebCrypto. */
  readonly spki: Uint8Array;
}

function keyDescription(info: pkijs.PublicKeyInfo): KeyDescription | undefined {
  const oid = info.algorithm.algorithmId;
  if (oid === OID.ed25519) return { kty: 'OKP', crv: 'Ed25519' };
  if (oid === OID.ecPublicKey) {
    const params = info.algorithm.algorithmParams;
    const curve = params instanceof asn1js.ObjectIdentifier ? params.valueBlock.toString() : undefined;
    if (curve === OID.p256) return { kty: 'EC', crv: 'P-256' };
    if (curve === OID.p384) return { kty: 'EC', crv: 'P-384' };
    return undefined;
  }
  if (oid === OID.rsaEncryption) {
    const key = info.parsedKey;
    if (!(key instanceof pkijs.RSAPublicKey)) return undefined;
    const modulus = key.modulus.valueBlock.valueHexView;
    let skip = 0;
    while (skip < modulus.length && modulus[skip] === 0) skip++;
    return { kty: 'RSA', bits: (modulus.length - skip) * 8 };
  }
  return undefined;
}

export async function leafInfo(leaf: ParsedCertificate): Promise<LeafInfo> {
  const san = extension(leaf.cert, OID.subjectAltName)?.parsedValue;
  const names = san instanceof pkijs.AltName ? san.altNames : [];
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', leaf.der as Uint8Array<ArrayBuffer>));
  return {
    der: leaf.der,
    sha256: toHex(digest),
    dnsNames: names.filter((n) => n.type === 2 && typeof n.value === 'string').map((n) => n.value as string),
    uris: names.filter((n) => n.type === 6 && typeof n.value === 'string').map((n) => n.value as string),
    key: keyDescription(leaf.cert.subjectPublicKeyInfo),
    spki: new Uint8Array(leaf.cert.subjectPublicKeyInfo.toSchema().toBER(false)),
  };
}

/**
 * Whether the leaf proves `identifier` (core §7.4): `x509:san:dns:<name>` is one of its dNSName
 * SANs (ASCII case-insensitive, no wildcard expansion), `x509:san:uri:<uri>` one of its URI SANs
 * (exactly), `x509:sha256:<hex>` the lowercase hex SHA-256 of its DER. Throws -31002
 * `san_mismatch` / `fingerprint_mismatch`, or `unsupported_scheme` for any other identifier.
 */
export function checkLeafIdentity(identifier: string, leaf: LeafInfo): void {
  if (identifier.startsWith('x509:san:dns:')) {
    const name = identifier.slice('x509:san:dns:'.length).toLowerCase();
    if (!name || !leaf.dnsNames.some((n) => n.toLowerCase() === name)) throw authFailure('san_mismatch');
    return;
  }
  if (identifier.startsWith('x509:san:uri:')) {
    const uri = identifier.slice('x509:san:uri:'.length);
    if (!uri || !leaf.uris.includes(uri)) throw authFailure('san_mismatch');
    return;
  }
  if (identifier.startsWith('x509:sha256:')) {
    if (identifier.slice('x509:sha256:'.length) !== leaf.sha256) throw authFailure('fingerprint_mismatch');
    return;
  }
  throw authFailure('unsupported_scheme');
}

const engine = new pkijs.CryptoEngine({ name: 'webcrypto', crypto: globalThis.crypto });

function sameCertificate(a: pkijs.Certificate, b: Uint8Array): boolean {
  const der = new Uint8Array(a.toSchema(true).toBER(false));
  return der.length === b.length && der.every((x, i) => x === b[i]);
}

/**
 * Validates a parsed chain (leaf first) against trust anchors at `now`: every certificate in it
 * within its validity (`expired` / `not_yet_valid`), every one after the leaf a CA, the leaf
 * allowed to sign, and a path from the leaf to an anchor whose signatures verify
 * (`untrusted_chain` otherwise).
 */
export async function validateChain(
  chain: readonly ParsedCertificate[],
  anchors: readonly ParsedCertificate[],
  now: number,
): Promise<void> {
  const [leaf, ...intermediates] = chain;
  if (!leaf) throw authFailure('untrusted_chain', 'x5c_required');
  try {
    for (const c of chain) {
      const problem = validity(c.cert, now);
      if (problem) throw authFailure(problem);
    }
    if (intermediates.some((c) => !isCa(c.cert))) throw authFailure('untrusted_chain', 'intermediate_not_ca');
    if (!maySign(leaf.cert)) throw authFailure('untrusted_chain', 'key_usage');
  } catch (e) {
    // A certificate that parsed but whose fields do not read as they should is malformed.
    if (e instanceof WmpError) throw e;
    throw authFailure('untrusted_chain', 'malformed_certificate');
  }
  let result: pkijs.CertificateChainValidationEngineVerifyResult;
  try {
    // pkijs takes the end-entity certificate as the last of `certs`.
    const validator = new pkijs.CertificateChainValidationEngine({
      trustedCerts: anchors.map((a) => a.cert),
      certs: [...intermediates.map((c) => c.cert)].reverse().concat(leaf.cert),
      checkDate: new Date(now),
    });
    result = await validator.verify({ passedWhenNotRevValues: true }, engine);
  } catch {
    throw authFailure('untrusted_chain');
  }
  if (!result.result) {
    if (result.resultCode === 8) {
      // Only a trust anchor is left to be out of its validity: ours were all checked above.
      throw authFailure(anchors.some((a) => validity(a.cert, now) === 'not_yet_valid') ? 'not_yet_valid' : 'expired');
    }
    throw authFailure('untrusted_chain');
  }
  const path = result.certificatePath ?? [];
  if (path.length === 0 || !sameCertificate(path[0]!, leaf.der)) throw authFailure('untrusted_chain');
}

const DN_NAMES: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
};

/** `TYPE=value` parts of a name, upper-cased types, trimmed values, in no particular order. */
function dnParts(text: string): string[] {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => {
      const at = p.indexOf('=');
      return at < 0 ? p : `${p.slice(0, at).trim().toUpperCase()}=${p.slice(at + 1).trim()}`;
    })
    .sort();
}

/**
 * Whether an anchor is the one an `x509_pki` trust hint's `root_ca` names (core §5.6.1): its
 * subject key identifier in hex (colons allowed, any case), or its subject DN (`CN=..., O=...`,
 * the parts in any order).
 */
export function anchorNamed(anchor: ParsedCertificate, rootCa: string): boolean {
  const ski = extension(anchor.cert, '2.5.29.14')?.parsedValue;
  const hex = rootCa.replace(/:/g, '').toLowerCase();
  if (ski instanceof asn1js.OctetString && /^[0-9a-f]+$/.test(hex) && toHex(ski.valueBlock.valueHexView) === hex) {
    return true;
  }
  const subject = anchor.cert.subject.typesAndValues.map((tv) => {
    const value = (tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value;
    return `${DN_NAMES[tv.type] ?? tv.type}=${typeof value === 'string' ? value : ''}`;
  });
  const wanted = dnParts(rootCa);
  const have = dnParts(subject.join(','));
  return wanted.length > 0 && wanted.length === have.length && wanted.every((p, i) => p === have[i]);
}
