import { isInexactInteger } from '@wmp/jsonrpc-envelope';
import { utf8 } from './bytes.js';
import { CanonicalizationError } from './errors.js';

/** Deeper than any bounded WMP message (depth 32): past it a value is taken for a cycle. */
const MAX_DEPTH = 1000;

function number(v: number): string {
  if (!Number.isFinite(v)) throw new CanonicalizationError('non-finite number');
  // Numbers that RFC 8785 would write but that another implementation could not read back exactly.
  if (isInexactInteger(v)) throw new CanonicalizationError('unsafe integer');
  // ECMAScript's Number::toString is RFC 8785's number form (-0 is written 0).
  return JSON.stringify(v);
}

function string(v: string): string {
  if (!v.isWellFormed()) throw new CanonicalizationError();
  return JSON.stringify(v);
}

/**
 * One pass over the value: checks and writes at once (the `canonicalize` package plus a
 * separate number check walked it twice and built a Set per value). Same output: members
 * sorted by UTF-16 code units, `undefined` and symbol members skipped, and in arrays written as
 * null, `toJSON` honoured.
 */
function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      return number(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      throw new CanonicalizationError('bigint');
    default:
      throw new CanonicalizationError('undefined has no JSON form');
  }
  if (value === null) return 'null';
  if (depth > MAX_DEPTH) throw new CanonicalizationError();
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return write(toJSON.call(value), depth + 1);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (i > 0) out += ',';
      out += item === undefined || typeof item === 'symbol' ? 'null' : write(item, depth + 1);
    }
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (const key of keys) {
    const member = object[key];
    if (member === undefined || typeof member === 'symbol') continue;
    if (out.length > 1) out += ',';
    out += `${string(key)}:${write(member, depth + 1)}`;
  }
  return `${out}}`;
}

/** RFC 8785 canonical JSON of `value`. Refuses non-finite numbers, unsafe integers and lone surrogates. */
export function jcs(value: unknown): string {
  return write(value, 0);
}

/** The UTF-8 bytes of `jcs(value)`: what gets hashed and signed. */
export function jcsBytes(value: unknown): Uint8Array {
  return utf8(jcs(value));
}
