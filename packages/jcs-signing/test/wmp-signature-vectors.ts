// The outside signature vectors (vectors/wmp-signatures/wmp-signatures.json, made by an
// independent implementation), typed for the tests that read them.
import { readFileSync } from 'node:fs';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { ChallengeClaims } from '../src/index.js';

export interface VectorKey {
  readonly seed_hex: string;
  readonly public_hex: string;
  readonly did: string;
  readonly kid: string;
}

export interface MessageSignatureCase {
  readonly name: string;
  readonly message: JsonRpcMessage;
  /** The identity the signature must belong to when the message names no `wmp.sender`. */
  readonly signer?: string;
  readonly valid: boolean;
  /** In the vector author's words; see `OUR_REASON` in the test. */
  readonly reason?: string;
}

export interface RelayChainCase {
  readonly name: string;
  readonly message: JsonRpcMessage;
  readonly last_relay_id: string;
  readonly valid: boolean;
}

export interface ChallengeCase {
  readonly name: string;
  readonly claims: ChallengeClaims;
  readonly signature: string;
  readonly valid: boolean;
  readonly reason?: string;
}

export interface SignatureVectors {
  /** The verifier's clock for the challenges (RFC 3339). */
  readonly now: string;
  readonly keys: Record<'alice' | 'mallory' | 'relay1' | 'relay2', VectorKey>;
  readonly message_signatures: readonly MessageSignatureCase[];
  readonly relay_chains: readonly RelayChainCase[];
  readonly challenges: readonly ChallengeCase[];
}

export const vectors: SignatureVectors = JSON.parse(
  readFileSync(new URL('../../../vectors/wmp-signatures/wmp-signatures.json', import.meta.url), 'utf8'),
);

/** The `wmp` object of a vector message (requests carry it in params, responses in result). */
export function wmpOf(message: JsonRpcMessage): Record<string, unknown> {
  const container = ('params' in message ? message.params : 'result' in message ? message.result : undefined) as
    | { wmp: Record<string, unknown> }
    | undefined;
  if (!container) throw new Error('vector message without a wmp container');
  return container.wmp;
}

/** The key whose kid signed `jws`, by its header's kid. */
export function keyOfKid(kid: string): VectorKey {
  const key = Object.values(vectors.keys).find((k) => k.kid === kid);
  if (!key) throw new Error(`no vector key for ${kid}`);
  return key;
}
