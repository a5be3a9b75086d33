import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { SignatureInvalidError } from '@wmp/jsonrpc-envelope';
import { metadataOf, signedContentOf, withMetadata } from './content.js';
import { jcsBytes } from './jcs.js';
import { signDetached, verifyDetached } from './jws.js';
import type { Signer } from './keypair.js';
import { didKeyResolver, type KeyResolver } from './resolver.js';

const WMP_VERSION = '0.1';

/**
 * Returns a copy of `message` with a non-repudiation signature in its `wmp.signature`
 * (core §5.4): a detached JWS over JCS of the content. Adds `wmp.version` if the message has none.
 */
export async function signMessage<M extends JsonRpcMessage>(message: M, signer: Signer): Promise<M> {
  const prepared = withMetadata(message, (wmp) => {
    const { signature: _old, ...rest } = wmp;
    return { version: WMP_VERSION, ...rest };
  });
  const signature = await signDetached(jcsBytes(signedContentOf(prepared)), signer);
  return withMetadata(prepared, (wmp) => ({ ...wmp, signature }));
}

export interface VerifyMessageOptions {
  /** Finds keys by kid; the default knows did:key and did:jwk. */
  readonly resolver?: KeyResolver;
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
  });
  return { kid: verified.header.kid, publicKey: verified.publicKey };
}
