import { InvalidRequestError, ParseError } from './errors.js';
import type { ParseLimits } from './limits.js';

/**
 * An integer that JSON writes as a plain digit string but that a double cannot hold exactly:
 * beyond ±(2^53-1) and below 1e21 (from 1e21 on, numbers are written with an exponent and read
 * as the floating-point values they are).
 */
export function isInexactInteger(v: number): boolean {
  return Number.isInteger(v) && !Number.isSafeInteger(v) && Math.abs(v) < 1e21;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** Any UTF-16 code unit outside ASCII (surrogates included). */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * UTF-8 length of `text` without encoding it, counting no further than `stopAbove` (enough to
 * refuse it). Messages are mostly ASCII: a native regex scan finds the first other character (or
 * none: the length is the answer) and only the rest is walked, about five times faster than
 * walking it all. A surrogate pair is 4 bytes; a lone surrogate counts as the 3-byte replacement
 * character, as TextEncoder writes it.
 */
export function utf8Length(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  const first = text.search(NON_ASCII);
  if (first === -1) return text.length;
  let n = text.length;
  for (let i = first; i < text.length && n <= stopAbove; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      n += 1;
      continue;
    }
    const next = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    n += 2;
  }
  return n;
}

interface Scan {
  readonly maxDepth: number;
  /** Colons outside string literals: one per object member in valid JSON. */
  readonly members: number;
}

/**
 * Where the string literal opened at `open` ends: the next quote not escaped, i.e. not after an odd
 * run of backslashes (a run after a character that is not one starts at a pair's beginning); the
 * text's length when none. Found with `indexOf`, not a character at a time: most of a message is
 * inside strings (a body's text): relay-routing's 980-byte deliver parses in 2.4 µs, not 5.8.
 */
function stringEnd(text: string, open: number): number {
  for (let quote = text.indexOf('"', open + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--; // stops at the opening quote at the latest
    if ((quote - 1 - before) % 2 === 0) return quote;
  }
  return text.length;
}

/** One pass over the text outside string literals: nesting depth and member count. */
function scan(text: string, depthLimit: number): Scan {
  let depth = 0;
  let maxDepth = 0;
  let members = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === COLON) members++;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > maxDepth) {
        maxDepth = depth;
        if (maxDepth > depthLimit) break;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { maxDepth, members };
}

/**
 * Counts object members in a parsed value and finds integers that JSON numbers cannot carry
 * exactly (with `count`, every member is counted even past one: the duplicate-key check needs
 * them all). Iterative, so it cannot overflow the stack whatever the input.
 */
function inspect(root: unknown, count: boolean): { members: number; unsafeInteger: boolean } {
  let members = 0;
  let unsafeInteger = false;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      if (isInexactInteger(v)) {
        unsafeInteger = true;
        if (!count) return { members, unsafeInteger };
      }
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const key in v) {
        members++;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return { members, unsafeInteger };
}

/**
 * JSON.parse with the WMP input rules: size and depth limits before parsing, then no duplicate
 * key at any depth and no integer outside ±(2^53-1). Invalid JSON is -32700; a limit or rule
 * violation is -32600 with `data.reason`.
 */
export function parseStrictJson(text: string, limits: Pick<ParseLimits, 'maxBytes' | 'maxDepth'>): unknown {
  const { value, inexactInteger } = parseStrictJsonReporting(text, limits);
  if (inexactInteger) throw new InvalidRequestError({ reason: 'integer out of range' });
  return value;
}

/**
 * `parseStrictJson`, but an integer JSON numbers cannot carry exactly is reported rather than
 * refused: a JSON-RPC parser decides once it knows which message (and which id) it is in.
 */
export function parseStrictJsonReporting(
  text: string,
  limits: Pick<ParseLimits, 'maxBytes' | 'maxDepth'>,
): { readonly value: unknown; readonly inexactInteger: boolean } {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most frames are far enough under the limit to skip counting.
  if (
    text.length > limits.maxBytes ||
    (text.length * 3 > limits.maxBytes && utf8Length(text, limits.maxBytes) > limits.maxBytes)
  ) {
    throw new InvalidRequestError({ reason: 'message too large' });
  }
  if (!text.isWellFormed()) throw new ParseError({ reason: 'invalid UTF-16 text' });
  const { maxDepth, members } = scan(text, limits.maxDepth);
  if (maxDepth > limits.maxDepth) throw new InvalidRequestError({ reason: 'nesting too deep' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ParseError({ reason: 'invalid JSON' });
  }
  const found = inspect(value, true);
  if (found.members !== members) throw new InvalidRequestError({ reason: 'duplicate key' });
  return { value, inexactInteger: found.unsafeInteger };
}

/** Whether a parsed value holds an integer JSON numbers cannot carry exactly, anywhere inside. */
export function holdsInexactInteger(value: unknown): boolean {
  return inspect(value, false).unsafeInteger;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 bytes strictly: malformed input is -32700, an oversized one -32600. */
export function decodeUtf8(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.byteLength > maxBytes) throw new InvalidRequestError({ reason: 'message too large' });
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    throw new ParseError({ reason: 'invalid UTF-8' });
  }
}
