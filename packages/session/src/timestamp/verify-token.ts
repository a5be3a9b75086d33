import { b64urlDecode, toHex } from '@wmp/jcs-signing';
import { WmpError } from '@wmp/jsonrpc-envelope';
import * as pkijs from 'pkijs';
import { reasonOf } from '../auth/reasons.js';
import type { ParsedCertificate } from '../auth/x509.js';
import { validateChain } from '../auth/x509-chain.js';
import { isTimeStampingOnly } from '../auth/x509-extensions.js';
import type { VerifiedTimestampToken } from '../timestamp-tokens.js';
import { checkSigningCertificate } from './ess.js';
import { tokenFailure } from './failures.js';
import { parseToken, sameBytes, sha256Imprint } from './token.js';

/** base64url characters of a token: a few certificates and a signature fit in far less. */
export const MAX_TOKEN_CHARS = 64 * 1024;

const engine = new pkijs.CryptoEngine({ name: 'webcrypto', crypto: globalThis.crypto });

function derOf(cert: pkijs.Certificate): Uint8Array {
  return new Uint8Array(cert.toSchema(false).toBER(false));
}

/**
 * Verifies `wmp.timestamp_token` (base64url DER of an RFC 3161 TimeStampToken) over `content`
 * (the JCS bytes of the message content, core §5.5: what a non-repudiation signature covers):
 * its imprint is SHA-256(content), its CMS signature verifies with the TSA certificate it carries,
 * whose ESS signing-certificate attribute names that certificate, which has the single critical
 * extKeyUsage `timeStamping` (RFC 3161 §2.3) and chains to `anchors` at `now` (RFC 5280, purpose
 * `timeStamping`), and `genTime` lies within its validity. Throws -31011 with `data.reason`
 * (`TimestampTokenFailure`) otherwise, cheap checks first.
 */
export async function verifyTimestampToken(
  token: string,
  content: Uint8Array,
  anchors: readonly ParsedCertificate[],
  now: number,
): Promise<VerifiedTimestampToken> {
  if (typeof token !== 'string') throw tokenFailure('token_malformed');
  if (token.startsWith('sct:')) throw tokenFailure('token_unsupported');
  if (token.length > MAX_TOKEN_CHARS) throw tokenFailure('token_malformed');
  let der: Uint8Array;
  try {
    der = b64urlDecode(token);
  } catch {
    throw tokenFailure('token_malformed');
  }
  const { signedData, tstInfo } = parseToken(der);
  const imprint = sha256Imprint(tstInfo);
  if (imprint === undefined) throw tokenFailure('token_imprint', 'hash_algorithm');
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', content as Uint8Array<ArrayBuffer>));
  if (!sameBytes(imprint, hash)) throw tokenFailure('token_imprint');

  let signer: pkijs.Certificate;
  try {
    const result = await signedData.verify({ signer: 0, data: content.slice().buffer, extendedMode: true }, engine);
    if (result.signatureVerified !== true || !result.signerCertificate) throw tokenFailure('token_signature');
    signer = result.signerCertificate;
  } catch (e) {
    if (e instanceof WmpError) throw e;
    const code = (e as { code?: unknown }).code;
    // 3: no certificate for the signer; 9, 10: contentType or messageDigest attribute missing.
    if (code === 3) throw tokenFailure('token_malformed', 'no_tsa_certificate');
    if (code === 9 || code === 10) throw tokenFailure('token_malformed', 'signed_attributes');
    throw tokenFailure('token_signature');
  }
  const signerDer = derOf(signer);
  const ess = await checkSigningCertificate(signedData.signerInfos[0]!, signerDer);
  if (ess === 'missing') throw tokenFailure('token_malformed', 'signing_certificate');
  if (ess === 'mismatch') throw tokenFailure('token_untrusted', 'signing_certificate');

  let timeStampingOnly: boolean;
  try {
    timeStampingOnly = isTimeStampingOnly(signer);
  } catch {
    timeStampingOnly = false;
  }
  if (!timeStampingOnly) throw tokenFailure('token_untrusted', 'extended_key_usage');
  const others = (signedData.certificates ?? []).filter(
    (c): c is pkijs.Certificate => c instanceof pkijs.Certificate && !sameBytes(derOf(c), signerDer),
  );
  const chain: ParsedCertificate[] = [signer, ...others].map((cert) => ({ cert, der: derOf(cert) }));
  try {
    await validateChain(chain, anchors, now, { purpose: 'timeStamping' });
  } catch (e) {
    if (!(e instanceof WmpError)) throw e;
    const detail = (e.data as { detail?: unknown } | undefined)?.detail;
    throw tokenFailure('token_untrusted', typeof detail === 'string' ? detail : reasonOf(e));
  }
  const genTime = tstInfo.genTime.getTime();
  if (genTime < signer.notBefore.value.getTime() || genTime > signer.notAfter.value.getTime()) {
    throw tokenFailure('token_untrusted', 'gen_time_outside_validity');
  }
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', signerDer as Uint8Array<ArrayBuffer>));
  return {
    genTime,
    serialNumber: toHex(new Uint8Array(tstInfo.serialNumber.valueBlock.valueHexView)),
    policy: tstInfo.policy,
    tsa: toHex(digest),
  };
}
