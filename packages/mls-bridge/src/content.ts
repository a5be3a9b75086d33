import { fromUtf8, jcs, utf8 } from '@wmp/jcs-signing';
import { DEFAULT_PARSE_LIMITS, parseStrictJson } from '@wmp/jsonrpc-envelope';
import { MlsBridgeError } from './errors.js';

// The WMP content encryption of core §5.2 (tables §8): the plaintext is params minus `wmp`, as
// UTF-8 JSON; the MLSMessage goes base64url into `params.ciphertext`; `wmp` stays in the clear
// (version, session_id, sender for routing) and gains `encrypted: true` and `epoch`.

export type Params = Record<string, unknown>;

function isObject(v: unknown): v is Params {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The plaintext of `params`: its content fields (everything but `wmp`) as the UTF-8 bytes of their
 * JCS form, so that numbers another implementation could not read back exactly are refused here
 * rather than garbled. Returns `wmp` too. Throws `invalid_params` for what cannot be encrypted.
 */
export function plaintextOf(params: unknown): { wmp: Params; plaintext: Uint8Array } {
  if (!isObject(params)) throw new MlsBridgeError('invalid_params');
  const { wmp, ...content } = params;
  if (wmp !== undefined && !isObject(wmp)) throw new MlsBridgeError('invalid_params');
  // Encrypting twice would leave the inner ciphertext unreadable to the receiver's one decryption.
  if (wmp?.encrypted === true || 'ciphertext' in content) throw new MlsBridgeError('invalid_params');
  let text: string;
  try {
    text = jcs(content);
  } catch (e) {
    throw new MlsBridgeError('invalid_params', { cause: e });
  }
  return { wmp: wmp ?? {}, plaintext: utf8(text) };
}

/** The encrypted params: only `wmp` (plus `encrypted`, `epoch`) and `ciphertext` go on the wire. */
export function encryptedParams(wmp: Params, ciphertext: string, epoch: number): Params {
  return { wmp: { ...wmp, encrypted: true, epoch }, ciphertext };
}

/** What an encrypted params object claims in the clear; throws `invalid_params` unless it is one. */
export function encryptedPartsOf(params: unknown): { wmp: Params; ciphertext: string; epoch: number } {
  if (!isObject(params) || !isObject(params.wmp)) throw new MlsBridgeError('invalid_params');
  const { wmp, ciphertext } = params;
  if (wmp.encrypted !== true || typeof ciphertext !== 'string') throw new MlsBridgeError('invalid_params');
  const epoch = wmp.epoch;
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0) {
    throw new MlsBridgeError('invalid_params');
  }
  return { wmp, ciphertext, epoch };
}

/**
 * The decrypted content merged with the clear `wmp`. The plaintext must be a JSON object (strict:
 * no duplicate keys, no unsafe integers, depth 32) and must not carry `wmp` of its own, which would
 * let a sender rewrite the routing fields the relay saw. Clear fields other than `wmp` and
 * `ciphertext` are dropped: nothing unauthenticated joins the content.
 */
export function paramsFromPlaintext(wmp: Params, plaintext: Uint8Array): Params {
  let content: unknown;
  try {
    content = parseStrictJson(fromUtf8(plaintext), DEFAULT_PARSE_LIMITS);
  } catch (e) {
    throw new MlsBridgeError('invalid_plaintext', { cause: e });
  }
  if (!isObject(content) || 'wmp' in content) throw new MlsBridgeError('invalid_plaintext');
  return { wmp, ...content };
}
