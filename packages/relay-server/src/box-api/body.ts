import { parseStrictJson } from '@wmp/jsonrpc-envelope';
import { readBoundedBody } from '@wmp/transports';
import { BoxApiError } from './errors.js';

/** Deepest JSON a box body may nest: an event (with its stamp) is 2 deep, the others 2 at most. */
const MAX_DEPTH = 4;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a request body, refusing it (`too_large`, 413) as soon as it passes `max` bytes: a declared
 * `Content-Length` over the cap is refused before reading anything, and a chunked body is cut off
 * at the cap, so an oversized body is never buffered whole nor parsed.
 */
export async function readBody(request: Request, max: number): Promise<Uint8Array> {
  const bytes = await readBoundedBody(request.body, max, request.headers.get('content-length'));
  if (bytes === undefined) throw new BoxApiError('too_large');
  return bytes;
}

/**
 * Strict JSON of a body (UTF-8, no duplicate keys, safe integers, bounded depth), or undefined.
 * Callers choose the error: an event's is `invalid_event`, other bodies' `bad_request`.
 */
export function parseBody(bytes: Uint8Array): unknown {
  try {
    return parseStrictJson(decoder.decode(bytes), { maxBytes: bytes.byteLength, maxDepth: MAX_DEPTH });
  } catch {
    return undefined;
  }
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
