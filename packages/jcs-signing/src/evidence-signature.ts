import { SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { didOf } from './did.js';
import { jcsBytes } from './jcs.js';
import { type DetachedJwsHeader, signDetached, verifyDetached } from './jws.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';
import type { MessageSigner, X5cChainVerifier } from './x5c.js';

/**
 * The `typ` of an evidence record's JWS: a signature over a record is never taken for a message
 * signature or a relay chain entry over the same bytes.
 */
export const EVIDENCE_JWS_TYPE = 'wmp-evidence+jws';

/** The JCS bytes of a record (what is signed, and what an RFC 3161 token of the record covers). */
function recordBytes(record: Readonly<Record<string, unknown>>): Uint8Array {
  try {
    return jcsBytes(record);
  } catch {
    throw new SignatureInvalidError({ reason: 'malformed' });
  }
}

/**
 * Signs an evidence record (wmp-tables §9) into `signed_evidence`: a compact JWS with a detached,
 * unencoded payload (RFC 7797, as core §5.4) over JCS(record), header `typ: wmp-evidence+jws`.
 * The signing input is ASCII(header) || '.' || JCS(record), so any JOSE or raw Ed25519 tool can
 * check it with the record beside it.
 */
export function signEvidence(record: Readonly<Record<string, unknown>>, signer: MessageSigner): Promise<string> {
  return signDetached(recordBytes(record), signer, { typ: EVIDENCE_JWS_TYPE });
}

export interface VerifyEvidenceOptions {
  /** Finds Ed25519 keys by kid; the default knows did:key and did:jwk. */
  readonly resolver?: KeyResolver;
  /** Checks the chain of a record signed with an `x5c` header; without it such records are refused. */
  readonly x5c?: X5cChainVerifier;
  /**
   * Who must have issued it; default the record's `evidence_issuer.id`. A signature by anyone
   * else is refused (`signer_mismatch`), and so is a record that names no issuer.
   */
  readonly issuer?: string;
}

export interface VerifiedEvidence {
  /** Who signed: the identifier part of the kid (the relay's `relay_id`). */
  readonly issuer: string;
  readonly alg: DetachedJwsHeader['alg'];
  readonly publicKey: Uint8Array;
}

/**
 * Verifies `signed_evidence` over `record`: the header is the evidence JWS's, the kid belongs to
 * the issuer and the signature holds over JCS(record). Throws `SignatureInvalidError` (-31010)
 * with `data.reason` (`malformed`, `header`, `unknown_key`, `signer_mismatch`, `signature`, ...).
 */
export async function verifyEvidence(
  record: Readonly<Record<string, unknown>>,
  signedEvidence: unknown,
  options: VerifyEvidenceOptions = {},
): Promise<VerifiedEvidence> {
  if (typeof signedEvidence !== 'string') throw new SignatureInvalidError({ reason: 'missing' });
  const named = (record.evidence_issuer as { id?: unknown } | undefined)?.id;
  const issuer = options.issuer ?? (typeof named === 'string' ? named : undefined);
  if (issuer === undefined) throw new SignatureInvalidError({ reason: 'signer_mismatch' });
  const verified = await verifyDetached(signedEvidence, recordBytes(record), {
    key: options.resolver ?? didKeyResolver,
    signer: issuer,
    ...(options.x5c ? { x5c: options.x5c } : {}),
  });
  if (verified.header.typ !== EVIDENCE_JWS_TYPE) throw new SignatureInvalidError({ reason: 'header' });
  return { issuer: didOf(verified.header.kid!), alg: verified.header.alg, publicKey: verified.publicKey };
}
