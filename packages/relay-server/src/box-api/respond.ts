import { BoxApiError } from './errors.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON answer. Built by hand rather than with `c.json` so every status is one plain number. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
}

/** A JSON answer whose body is already serialized (stored events and cards are kept as JSON text). */
export function rawJsonResponse(status: number, text: string): Response {
  return new Response(text, { status, headers: JSON_HEADERS });
}

export function errorResponse(error: BoxApiError): Response {
  return jsonResponse(error.status, error.toJSON());
}

/** Anything that is not a `BoxApiError` is our fault: a fixed 500, with no internals. */
export function internalErrorResponse(): Response {
  return errorResponse(new BoxApiError('internal'));
}
