import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { metadataOf, signedContentOf, withMetadata } from './content.js';
import { didOf } from './did.js';
import { jcsBytes } from './jcs.js';
import { type DetachedJwsHeader, signDetached, verifyDetached } from './jws.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';
import type { MessageSigner, X5cChainVerifier } from './x5c.js';

const WMP_VERSION = '0.1';

/**
 * Returns a copy of `message` with a non-repudiation signature in its `wmp.signature`
 * (core §5.4): a detached JWS over JCS of the content, EdDSA with an Ed25519 `Signer`, or ES256
 * (or EdDSA) with the `x5c` of an `X5cSigner`. Adds `wmp.version` if the message has none.
 */
export async function signMessage<M extends JsonRpcMessage>(message: M, signer: MessageSigner): Promise<M> {
  const prepared = withMetadata(message, (wmp) => {
    const { signature: _old, ...rest } = wmp;
    return { version: WMP_VERSION, ...rest };
  });
  const signature = await signDetached(jcsBytes(signedContentOf(prepared)), signer);
  return withMetadata(prepared, (wmp) => ({ ...wmp, signature }));
}

export interface VerifyMessageOptions {
  /** Finds Ed25519 keys by kid; the default knows did:key and did:jwk. */
  readonly resolver?: KeyResolver;
  /** Checks the chain of a signature made with an `x5c` header (X.509 identities); without it they are refused. */
  readonly x5c?: X5cChainVerifier;
  /** Refuse a message without a signature (the evidence profile, or a policy). Default false. */
  readonly required?: boolean;
  /**
   * The identity the signature must belong to. Defaults to `wmp.sender` when the message names one:
   * a signature by anyone else is refused (sender binding).
   */
  readonly signer?: string;
}

export interface VerifiedMessage {
  readonly kid: string | undefined;
  /** Who signed: the identifier part of the kid (a DID, or an `x509:` id proven by the certificate). */
  readonly signer: string | undefined;
  readonly alg: DetachedJwsHeader['alg'];
  /** The certificate chain the signature came with (standard base64 DER, leaf first), if any. */
  readonly x5c: readonly string[] | undefined;
  /** Ed25519 (32 bytes) or an uncompressed P-256 point (65 bytes). */
  readonly publicKey: Uint8Array;
}

/**
 * Verifies `wmp.signature`. Returns the signing key, or `undefined` when unsigned and not required.
 * Throws `SignatureInvalidError` (-31010) with `data.reason` on any failure.
 */
export async function verifyMessage(
  message: JsonRpcMessage,
  options: VerifyMessageOptions = {},
): Promise<VerifiedMessage | undefined> {
  const wmp = metadataOf(message);
  const signature = wmp?.signature;
  if (signature === undefined) {
    if (options.required) throw new SignatureInvalidError({ reason: 'missing' });
    return undefined;
  }
  if (typeof signature !== 'string') throw new SignatureInvalidError({ reason: 'malformed' });
  const sender = options.signer ?? (typeof wmp?.sender === 'string' ? wmp.sender : undefined);
  let payload: Uint8Array;
  try {
    payload = jcsBytes(signedContentOf(message));
  } catch {
    throw new SignatureInvalidError({ reason: 'malformed' });
  }
  const verified = await verifyDetached(signature, payload, {
    key: options.resolver ?? didKeyResolver,
    ...(sender === undefined ? {} : { signer: sender }),
    ...(options.x5c ? { x5c: options.x5c } : {}),
  });
  const kid = verified.header.kid;
  return {
    kid,
    signer: kid === undefined ? undefined : didOf(kid),
    alg: verified.header.alg,
    x5c: verified.header.x5c,
    publicKey: verified.publicKey,
  };
}
