import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { TsaClientError } from './failures.js';
import { OIDS, parseDer, parseToken, sameBytes, sha256Imprint } from './token.js';

/**
 * RFC 3161 §2.4 requests and replies, as bytes: a TimeStampReq over a SHA-256 imprint with a
 * nonce and `certReq` (the TSA's certificate must come in the token), and the token of a
 * TimeStampResp, checked to answer that request.
 */

/** A positive 64-bit nonce, minimally encoded (first byte 0x40-0x7f). */
export function newNonce(): Uint8Array {
  const nonce = crypto.getRandomValues(new Uint8Array(8));
  nonce[0] = (nonce[0]! & 0x3f) | 0x40;
  return nonce;
}

/** The DER of a TimeStampReq for `imprint` (a SHA-256 hash). */
export function timestampQuery(imprint: Uint8Array, nonce: Uint8Array): Uint8Array {
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OIDS.sha256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: imprint.slice().buffer }),
    }),
    nonce: new asn1js.Integer({ valueHex: nonce.slice().buffer }),
    certReq: true,
  });
  return new Uint8Array(request.toSchema().toBER(false));
}

/**
 * The token (its DER exactly as the TSA sent it) of a TimeStampResp that grants the request for
 * `imprint` with `nonce`. `TsaClientError` ERR_TSA_REPLY (not a reply, no token), ERR_TSA_REFUSED
 * (status `rejection`, `waiting`, ...) or ERR_TSA_MISMATCH (another imprint or nonce).
 */
export function tokenOfReply(reply: Uint8Array, imprint: Uint8Array, nonce: Uint8Array): Uint8Array {
  let response: pkijs.TimeStampResp;
  let tokenDer: Uint8Array | undefined;
  try {
    const asn1 = parseDer(reply);
    if (!(asn1 instanceof asn1js.Sequence)) throw new Error('not a SEQUENCE');
    response = new pkijs.TimeStampResp({ schema: asn1 });
    // The token's own bytes, not pkijs's re-encoding of them: its signature is over what the TSA wrote.
    const second = asn1.valueBlock.value[1];
    if (second !== undefined) tokenDer = new Uint8Array(second.valueBeforeDecodeView);
  } catch {
    throw new TsaClientError('ERR_TSA_REPLY');
  }
  const status = response.status.status;
  if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
    throw new TsaClientError('ERR_TSA_REFUSED', { status });
  }
  if (tokenDer === undefined) throw new TsaClientError('ERR_TSA_REPLY');
  let tstInfo: pkijs.TSTInfo;
  try {
    tstInfo = parseToken(tokenDer).tstInfo;
  } catch {
    throw new TsaClientError('ERR_TSA_REPLY');
  }
  const got = sha256Imprint(tstInfo);
  const gotNonce = tstInfo.nonce ? new Uint8Array(tstInfo.nonce.valueBlock.valueHexView) : undefined;
  if (got === undefined || !sameBytes(got, imprint) || gotNonce === undefined || !sameBytes(gotNonce, nonce)) {
    throw new TsaClientError('ERR_TSA_MISMATCH');
  }
  return tokenDer;
}
