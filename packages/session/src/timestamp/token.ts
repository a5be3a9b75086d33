import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { tokenFailure } from './failures.js';

/** The parts of an RFC 3161 TimeStampToken (a CMS SignedData over a TSTInfo, RFC 3161 §2.4.2). */
export interface ParsedToken {
  readonly signedData: pkijs.SignedData;
  readonly tstInfo: pkijs.TSTInfo;
}

export const OIDS = {
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  sha256: '2.16.840.1.101.3.4.2.1',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
} as const;

/** Exactly one DER value, no trailing bytes; undefined otherwise. */
export function parseDer(der: Uint8Array): asn1js.AsnType | undefined {
  const asn1 = asn1js.fromBER(der);
  return asn1.offset === -1 || asn1.offset !== der.byteLength ? undefined : asn1.result;
}

/**
 * Parses a TimeStampToken's DER: a ContentInfo of SignedData whose content is a TSTInfo (version
 * 1), with one signer and the certificates present. Anything else is -31011 `token_malformed`.
 */
export function parseToken(der: Uint8Array): ParsedToken {
  try {
    const asn1 = parseDer(der);
    if (asn1 === undefined) throw new Error('not one DER value');
    const info = new pkijs.ContentInfo({ schema: asn1 });
    if (info.contentType !== OIDS.signedData) throw new Error('not SignedData');
    const signedData = new pkijs.SignedData({ schema: info.content });
    const encap = signedData.encapContentInfo;
    if (encap.eContentType !== OIDS.tstInfo || !encap.eContent) throw new Error('not a TSTInfo');
    if (signedData.signerInfos.length !== 1) throw new Error('not one signer');
    const tstInfo = pkijs.TSTInfo.fromBER(encap.eContent.getValue());
    if (tstInfo.version !== 1) throw new Error('TSTInfo version');
    return { signedData, tstInfo };
  } catch {
    throw tokenFailure('token_malformed');
  }
}

/** The token's imprint when it is a SHA-256 one; undefined for another hash. */
export function sha256Imprint(tstInfo: pkijs.TSTInfo): Uint8Array | undefined {
  const imprint = tstInfo.messageImprint;
  if (imprint.hashAlgorithm.algorithmId !== OIDS.sha256) return undefined;
  return new Uint8Array(imprint.hashedMessage.valueBlock.valueHexView);
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
}
