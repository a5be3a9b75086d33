import { isInexactInteger } from '@wmp/jsonrpc-envelope';
import canonicalize from 'canonicalize';
import { utf8 } from './bytes.js';
import { CanonicalizationError } from './errors.js';

/** Numbers that RFC 8785 would write but that another implementation could not read back exactly. */
function assertExactNumbers(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new CanonicalizationError('non-finite number');
      if (isInexactInteger(v)) throw new CanonicalizationError('unsafe integer');
    } else if (typeof v === 'bigint') {
      throw new CanonicalizationError('bigint');
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
    }
  }
}

/** RFC 8785 canonical JSON of `value`. Refuses non-finite numbers, unsafe integers and lone surrogates. */
export function jcs(value: unknown): string {
  assertExactNumbers(value);
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch {
    throw new CanonicalizationError();
  }
  if (out === undefined) throw new CanonicalizationError('undefined has no JSON form');
  return out;
}

/** The UTF-8 bytes of `jcs(value)`: what gets hashed and signed. */
export function jcsBytes(value: unknown): Uint8Array {
  return utf8(jcs(value));
}
