import { coreMethods, InvalidParamsError, type MethodRegistry } from '@wmp/jsonrpc-envelope';
import { clearFieldsOf, isContentMethod } from './policy.js';

/**
 * Checks the clear part of encrypted params, whose method members are inside the ciphertext:
 * a content method (-32602 otherwise: control messages are never encrypted), `wmp` with
 * `encrypted: true` and an `epoch`, a base64url `ciphertext`, and at most the method's routing
 * fields beside them (nothing unauthenticated rides along). The method's own schema is applied to
 * the plaintext once decrypted.
 */
export function validateEncryptedParams(
  method: string,
  params: unknown,
  methods: MethodRegistry = coreMethods,
): Record<string, unknown> {
  methods.require(method);
  if (!isContentMethod(method, methods)) throw new InvalidParamsError({ reason: `${method} is never encrypted` });
  const routing = clearFieldsOf(method, methods);
  const p = params as Record<string, unknown>;
  for (const key of Object.keys(p)) {
    if (key !== 'wmp' && key !== 'ciphertext' && !routing.includes(key)) {
      throw new InvalidParamsError({ reason: `${key}: must be inside the ciphertext` });
    }
  }
  // The clear part of any encrypted message has the shape of an encrypted deliver: `wmp`,
  // `ciphertext` and, at most, `to`; its schema checks all three.
  const clear = coreMethods.validateParams('wmp.message.deliver', p) as Record<string, unknown>;
  const wmp = clear.wmp as { epoch?: number };
  if (typeof clear.ciphertext !== 'string') throw new InvalidParamsError({ reason: 'ciphertext: required' });
  if (wmp.epoch === undefined) throw new InvalidParamsError({ reason: 'wmp.epoch: required when encrypted' });
  return clear;
}
