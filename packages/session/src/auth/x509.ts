import { toHex } from '@wmp/jcs-signing';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { SessionError } from '../errors.js';
import type { KeyDescription } from './jws.js';
import { authFailure } from './reasons.js';
import { extension, OID } from './x509-extensions.js';

/**
 * X.509 for `x5c` and `mtls`: parsing with bounds (pkijs on WebCrypto; browser-safe), what WMP
 * reads of a leaf, and whether the leaf names the sender (a SAN or its SHA-256 fingerprint).
 * Chain validation is x509-chain.ts.
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

/** Why certificates did not parse: a fixed vocabulary, each with its fixed message. */
export type CertificateParseFailure =
  | 'not_base64'
  | 'too_many_blocks'
  | 'not_a_certificate'
  | 'no_certificate_block'
  | 'no_trust_anchors';

const PARSE_MESSAGES: Readonly<Record<CertificateParseFailure, string>> = {
  not_base64: 'not base64',
  too_many_blocks: 'too many PEM blocks',
  not_a_certificate: 'not a certificate',
  no_certificate_block: 'no CERTIFICATE block',
  no_trust_anchors: 'no trust anchors',
};

/** A certificate that did not parse: the caller decides what that means (operator input or peer input). */
export class CertificateParseError extends SessionError {
  declare readonly code: 'ERR_CERTIFICATE_PARSE';
  readonly reason: CertificateParseFailure;
  constructor(reason: CertificateParseFailure) {
    super('ERR_CERTIFICATE_PARSE', PARSE_MESSAGES[reason]);
    this.name = 'CertificateParseError';
    this.reason = reason;
  }
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeBase64(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (clean.length % 4 !== 0 || !B64.test(clean)) throw new CertificateParseError('not_base64');
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
    if (out.length >= maxBlocks) throw new CertificateParseError('too_many_blocks');
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
    throw new CertificateParseError('not_a_certificate');
  }
  return { der, cert };
}

/** Operator trust anchors, parsed once (a bad one throws `CertificateParseError`). */
export function parseTrustAnchors(anchors: TrustAnchors): ParsedCertificate[] {
  const items = typeof anchors === 'string' || anchors instanceof Uint8Array ? [anchors] : anchors;
  const out: ParsedCertificate[] = [];
  for (const item of items) {
    const ders = typeof item === 'string' ? pemBlocks(item, 'CERTIFICATE') : [item];
    if (typeof item === 'string' && ders.length === 0) throw new CertificateParseError('no_certificate_block');
    for (const der of ders) out.push(parseCertificateDer(der));
  }
  if (out.length === 0) throw new CertificateParseError('no_trust_anchors');
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

/** ASCII lower case: dNSNames are IA5 text, and Unicode case folding must not make two names one. */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/**
 * Whether the leaf proves `identifier` (core §7.4): `x509:san:dns:<name>` is one of its dNSName
 * SANs, compared lower-case: the identifier is written lower-case (one spelling per identity;
 * `san_mismatch` `not_lower_case` otherwise) and matches a SAN in any case; a wildcard is never an
 * identifier (`wildcard`) and a wildcard SAN is never expanded. `x509:san:uri:<uri>` is one of its
 * URI SANs (exactly), `x509:sha256:<hex>` the lowercase hex SHA-256 of its DER. Throws -31002
 * `san_mismatch` / `fingerprint_mismatch`, or `unsupported_scheme` for any other identifier.
 */
export function checkLeafIdentity(identifier: string, leaf: LeafInfo): void {
  if (identifier.startsWith('x509:san:dns:')) {
    const name = identifier.slice('x509:san:dns:'.length);
    if (name.includes('*')) throw authFailure('san_mismatch', 'wildcard');
    if (name !== asciiLowerCase(name)) throw authFailure('san_mismatch', 'not_lower_case');
    if (!name || !leaf.dnsNames.some((n) => asciiLowerCase(n) === name)) throw authFailure('san_mismatch');
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
