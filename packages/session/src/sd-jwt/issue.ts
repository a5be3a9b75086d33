// The issuer's side, for issuers and tests: an SD-JWT VC bound to a holder key.
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { b64urlEncode, utf8 } from '@wmp/jcs-signing';
import type { JwsSigner } from '../auth/jws.js';
import { hasher, saltGenerator } from './hashing.js';

export interface IssueSdJwtVcInput {
  /** `iss`: a DID, or an https issuer identifier (with `x5c`, a name of its certificate). */
  readonly issuer: string;
  readonly vct: string;
  readonly claims: Readonly<Record<string, unknown>>;
  /** Claims the holder may disclose selectively (the others are always visible). */
  readonly disclosable: readonly string[];
  /** The holder's public key (`cnf.jwk`). */
  readonly holder: JsonWebKey;
  /** Signs it; its `kid` goes in the header. */
  readonly signer: JwsSigner;
  /** The issuer's certificate chain (base64 DER, leaf first), for `x509_pki` relying parties. */
  readonly x5c?: readonly string[];
  readonly issuedAt?: number;
  readonly expiresAt?: number;
  /** A status list entry (a token status list, RFC draft-ietf-oauth-status-list). */
  readonly status?: { readonly idx: number; readonly uri: string };
  /** The header `typ`, default `vc+sd-jwt`. */
  readonly typ?: 'vc+sd-jwt' | 'dc+sd-jwt';
}

/** Issues an SD-JWT VC (compact, ending in `~`: no key binding yet). */
export async function issueSdJwtVc(input: IssueSdJwtVcInput): Promise<string> {
  const signer = input.signer;
  const instance = new SDJwtVcInstance({
    hasher,
    saltGenerator,
    signAlg: signer.alg,
    signer: async (data) => b64urlEncode(await signer.sign(utf8(data))),
  });
  const seconds = (ms: number) => Math.floor(ms / 1000);
  const payload = {
    ...input.claims,
    iss: input.issuer,
    vct: input.vct,
    iat: seconds(input.issuedAt ?? Date.now()),
    ...(input.expiresAt === undefined ? {} : { exp: seconds(input.expiresAt) }),
    cnf: { jwk: input.holder },
    ...(input.status ? { status: { status_list: { idx: input.status.idx, uri: input.status.uri } } } : {}),
  };
  return instance.issue(payload, { _sd: [...input.disclosable] } as never, {
    header: {
      typ: input.typ ?? 'vc+sd-jwt',
      ...(signer.kid === undefined ? {} : { kid: signer.kid }),
      ...(input.x5c ? { x5c: [...input.x5c] } : {}),
    },
  });
}
