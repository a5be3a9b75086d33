// RFC 3161 tokens and replies as a TSA makes them, with pkijs: a TSTInfo (SHA-256 imprint, the
// request's nonce) in a CMS SignedData signed by the TSA certificate over signed attributes
// (contentType, messageDigest, ESS signingCertificateV2), wrapped in a TimeStampResp. Each field
// can be made wrong on purpose for the refusal tests.
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { TestCert } from '../../packages/session/test/pki.js';

const OID = {
  sha256: '2.16.840.1.101.3.4.2.1',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  policy: '1.3.6.1.4.1.99999.3161.1',
} as const;

/** How a token is made wrong (or `none`). */
export type TokenFault =
  | 'none'
  /** The imprint is the hash of other bytes. */
  | 'wrong_imprint'
  /** A SHA-512 imprint (the right content, the wrong hash). */
  | 'sha512_imprint'
  /** A nonce other than the request's. */
  | 'wrong_nonce'
  /** One bit of the CMS signature flipped. */
  | 'bad_signature'
  /** No ESS signing-certificate attribute. */
  | 'no_signing_certificate'
  /** An ESS signing-certificate attribute naming another certificate. */
  | 'other_signing_certificate';

export interface TokenInput {
  readonly imprint: Uint8Array;
  readonly nonce?: asn1js.Integer | undefined;
  readonly certificate: TestCert;
  /** Extra certificates in the token (intermediates). */
  readonly chain?: readonly TestCert[];
  readonly genTime?: Date;
  readonly fault?: TokenFault;
  readonly serial: number;
}

const sha256 = (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());

function certificateOf(cert: TestCert): pkijs.Certificate {
  return pkijs.Certificate.fromBER(cert.der.slice());
}

async function privateKeyOf(cert: TestCert): Promise<CryptoKey> {
  const pkcs8 = new Uint8Array(cert.key.privateKey.export({ type: 'pkcs8', format: 'der' }));
  return crypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
}

/** signingCertificateV2 { certs { ESSCertIDv2 { certHash } } } (SHA-256, the default, left out). */
function signingCertificateV2(certDer: Uint8Array): pkijs.Attribute {
  const essCertId = new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: sha256(certDer).buffer })] });
  return new pkijs.Attribute({
    type: OID.signingCertificateV2,
    values: [new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertId] })] })],
  });
}

/** The DER of a TimeStampToken (ContentInfo of SignedData over a TSTInfo). */
export async function makeToken(input: TokenInput): Promise<Uint8Array> {
  const fault = input.fault ?? 'none';
  const imprint = fault === 'wrong_imprint' ? sha256(new TextEncoder().encode('some other content')) : input.imprint;
  const hashAlgorithm = fault === 'sha512_imprint' ? '2.16.840.1.101.3.4.2.3' : OID.sha256;
  const nonce = fault === 'wrong_nonce' ? new asn1js.Integer({ value: 0x1234_5678 }) : input.nonce;
  const tstInfo = new pkijs.TSTInfo({
    version: 1,
    policy: OID.policy,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: hashAlgorithm }),
      hashedMessage: new asn1js.OctetString({
        valueHex: (fault === 'sha512_imprint' ? new Uint8Array(64) : imprint).slice().buffer,
      }),
    }),
    serialNumber: new asn1js.Integer({ value: input.serial }),
    genTime: input.genTime ?? new Date(),
    ...(nonce ? { nonce } : {}),
  });
  const tstDer = new Uint8Array(tstInfo.toSchema().toBER(false));
  const certificate = certificateOf(input.certificate);
  const signingCertificate =
    fault === 'other_signing_certificate'
      ? signingCertificateV2(new TextEncoder().encode('another certificate'))
      : signingCertificateV2(input.certificate.der);
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({
      type: 0,
      attributes: [
        new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })] }),
        new pkijs.Attribute({
          type: OID.messageDigest,
          values: [new asn1js.OctetString({ valueHex: sha256(tstDer).buffer })],
        }),
        ...(fault === 'no_signing_certificate' ? [] : [signingCertificate]),
      ],
    }),
  });
  const signedData = new pkijs.SignedData({
    version: 3,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType: OID.tstInfo,
      eContent: new asn1js.OctetString({ valueHex: tstDer.buffer }),
    }),
    signerInfos: [signerInfo],
    certificates: [certificate, ...(input.chain ?? []).map(certificateOf)],
  });
  await signedData.sign(await privateKeyOf(input.certificate), 0, 'SHA-256');
  if (fault === 'bad_signature') {
    const signature = new Uint8Array(signerInfo.signature.valueBlock.valueHexView);
    signature[signature.length - 1]! ^= 1;
    signerInfo.signature = new asn1js.OctetString({ valueHex: signature.buffer });
  }
  const contentInfo = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
  return new Uint8Array(contentInfo.toSchema().toBER(false));
}

/** The DER of a TimeStampResp: `granted` with the token, or a refusal (`rejection`, ...) without. */
export function makeReply(token: Uint8Array | undefined, status = pkijs.PKIStatus.granted): Uint8Array {
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({ status }),
    ...(token ? { timeStampToken: pkijs.ContentInfo.fromBER(token.slice()) } : {}),
  });
  return new Uint8Array(response.toSchema().toBER(false));
}

/** The imprint and nonce of a TimeStampReq (DER); throws when it is not one. */
export function readQuery(der: Uint8Array): {
  imprint: Uint8Array;
  nonce: asn1js.Integer | undefined;
  certReq: boolean;
} {
  const request = pkijs.TimeStampReq.fromBER(der.slice());
  if (request.messageImprint.hashAlgorithm.algorithmId !== OID.sha256) throw new Error('not a SHA-256 imprint');
  return {
    imprint: new Uint8Array(request.messageImprint.hashedMessage.valueBlock.valueHexView),
    nonce: request.nonce,
    certReq: request.certReq === true,
  };
}
