// The holder's side (core §5.6): a credential kept by the application, presented with chosen
// disclosures and a key binding JWT over this session's challenge and id. Browser-safe.
import { SDJwt } from '@sd-jwt/core';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { b64urlEncode, type Signer, utf8 } from '@wmp/jcs-signing';
import type { JwsSigner } from '../auth/jws.js';
import { decodeCompactJwt, ed25519Jwk } from '../jwt/compact-jwt.js';
import { disclosedNames } from './disclosures.js';
import { hasher } from './hashing.js';

/** The key a credential is bound to (`cnf.jwk`): it signs the key binding JWT. */
export interface HolderKey extends JwsSigner {
  readonly publicJwk: JsonWebKey;
}

/** An Ed25519 signer (a did:key identity's keypair) as a holder key. */
export function ed25519HolderKey(signer: Signer): HolderKey {
  return { alg: 'EdDSA', publicJwk: ed25519Jwk(signer.publicKey), sign: (data) => signer.sign(data) };
}

/** What a holder reads of a credential it keeps (nothing verified: it is its own). */
export interface CredentialInfo {
  readonly issuer: string | undefined;
  readonly vct: string | undefined;
  /** Claims it can disclose selectively. */
  readonly disclosable: readonly string[];
  readonly expiresAt: number | undefined;
}

/** Reads a stored SD-JWT VC; throws a `TypeError` when it is not one. */
export async function credentialInfo(credential: string): Promise<CredentialInfo> {
  const issuerJwt = decodeCompactJwt(credential.split('~')[0]);
  let disclosures: readonly { key?: string }[];
  try {
    disclosures = (await SDJwt.fromEncode(credential, hasher)).disclosures ?? [];
  } catch {
    throw new TypeError('not an SD-JWT VC');
  }
  if (issuerJwt === undefined) throw new TypeError('not an SD-JWT VC');
  const { iss, vct, exp } = issuerJwt.payload;
  return {
    issuer: typeof iss === 'string' ? iss : undefined,
    vct: typeof vct === 'string' ? vct : undefined,
    disclosable: disclosedNames(disclosures),
    expiresAt: typeof exp === 'number' ? exp * 1000 : undefined,
  };
}

export interface PresentOptions {
  /** Claim names to disclose (top-level); the others stay hidden. */
  readonly disclose: readonly string[];
  /** The session's challenge. */
  readonly nonce: string;
  /** The session id (or the MLS group id). */
  readonly audience: string;
  readonly holder: HolderKey;
  readonly now?: number;
}

/** The presentation (SD-JWT with the chosen disclosures and a key binding JWT). */
export async function presentSdJwt(credential: string, options: PresentOptions): Promise<string> {
  const holder = options.holder;
  const instance = new SDJwtVcInstance({
    hasher,
    kbSignAlg: holder.alg,
    kbSigner: async (data) => b64urlEncode(await holder.sign(utf8(data))),
  });
  // A stored credential carries no key binding JWT; one that does gets a new one.
  const bare = credential.endsWith('~') ? credential : `${credential.slice(0, credential.lastIndexOf('~') + 1)}`;
  const frame = Object.fromEntries(options.disclose.map((name) => [name, true]));
  return instance.present(bare, frame, {
    kb: {
      payload: {
        iat: Math.floor((options.now ?? Date.now()) / 1000),
        aud: options.audience,
        nonce: options.nonce,
      },
    },
  });
}

/** A `wmp.identity_assertions` entry (core §5.6) for this session. */
export interface SdJwtAssertion {
  readonly type: 'verifiable_presentation';
  readonly format: string;
  readonly vp_token: string;
  readonly audience: string;
  readonly nonce: string;
  readonly disclosed_claims: readonly string[];
  readonly trust_hints?: readonly Readonly<Record<string, unknown>>[];
}

/** Presents `credential` as an identity assertion of `format` (default `vc+sd-jwt`). */
export async function sdJwtAssertion(
  credential: string,
  options: PresentOptions & {
    readonly format?: string;
    readonly trustHints?: readonly Readonly<Record<string, unknown>>[];
  },
): Promise<SdJwtAssertion> {
  return {
    type: 'verifiable_presentation',
    format: options.format ?? 'vc+sd-jwt',
    vp_token: await presentSdJwt(credential, options),
    audience: options.audience,
    nonce: options.nonce,
    disclosed_claims: [...options.disclose],
    ...(options.trustHints ? { trust_hints: options.trustHints } : {}),
  };
}
