import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { type ByteBudget, readBody as readRequestBody } from '@wmp/transports';
import { BoxApiError } from './errors.js';

/** Deepest JSON a box body may nest: an event (with its stamp) is 2 deep, the others 2 at most. */
const MAX_DEPTH = 4;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The server-wide bounds of body reads: bytes in flight, and how long one may take. */
export interface BodyBounds {
  readonly bodyBudget?: ByteBudget | undefined;
  readonly bodyTimeoutMs?: number | undefined;
}

/**
 * Reads a request body, refusing it (`too_large`, 413) as soon as it passes `max` bytes: a declared
 * `Content-Length` over the cap is refused before reading anything, and a chunked body is cut off
 * at the cap, so an oversized body is never buffered whole nor parsed. A body that takes longer
 * than the bound, or does not fit in the server's budget, is `unavailable` (503).
 */
export async function readBody(request: Request, max: number, bounds: BodyBounds = {}): Promise<Uint8Array> {
  const read = await readRequestBody(request.body, {
    maxBytes: max,
    declaredLength: request.headers.get('content-length'),
    budget: bounds.bodyBudget,
    timeoutMs: bounds.bodyTimeoutMs,
  });
  if (read.ok) return read.bytes;
  if (read.reason === 'aborted') throw new BoxApiError('bad_request', { message: 'body incomplete' });
  throw new BoxApiError(read.reason === 'too_large' ? 'too_large' : 'unavailable');
}

/**
 * Strict JSON of a body (UTF-8, no duplicate keys, safe integers, bounded depth), or undefined.
 * Callers choose the error: an event's is `invalid_event`, other bodies' `bad_request`.
 */
export function parseBody(bytes: Uint8Array): unknown {
  try {
    return parseStrict(decoder.decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * `parseBody` for an event, with its JSON text when the body is exactly `JSON.stringify` of the
 * value it parses to (what clients send): the box then stores that text as it is instead of
 * serializing the event again. Such a text cannot hold a duplicate key (`JSON.stringify` never
 * writes one); with only strings and safe integers two levels deep, it passes every rule of the
 * strict parser, which decides every other body.
 */
export function parseEventBody(bytes: Uint8Array): { value: unknown; json: string | undefined } | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (isFlat(value, 2) && JSON.stringify(value) === text) return { value, json: text };
  } catch {
    // Not JSON, or too deep to serialize again: the strict parser gives the verdict.
  }
  try {
    return { value: parseStrict(text), json: undefined };
  } catch {
    return undefined;
  }
}

function parseStrict(text: string): unknown {
  // The body was read under its cap and a string is never longer than its UTF-8 bytes: the limit is
  // set so that the parser does not count them again.
  return parseStrictJson(text, { maxBytes: text.length * 3, maxDepth: MAX_DEPTH });
}

/** An object of strings, safe integers and (down to `depth`) such objects. */
function isFlat(value: unknown, depth: number): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    const v = value[key];
    if (typeof v === 'string' || Number.isSafeInteger(v)) continue;
    if (depth > 1 && isFlat(v, depth - 1)) continue;
    return false;
  }
  return true;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A JSON object with exactly the given keys, or `bad_request`. */
export function objectWith(value: unknown, keys: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(value)) throw new BoxApiError('bad_request', { message: 'body must be a JSON object' });
  const own = Object.keys(value);
  if (own.length !== keys.length || !keys.every((k) => k in value)) {
    throw new BoxApiError('bad_request', { message: `body must have exactly: ${keys.join(', ')}` });
  }
  return value;
}
