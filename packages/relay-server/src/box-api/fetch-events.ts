import type { Context } from 'hono';
import { authenticate } from './auth.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { eventsPageText } from './events-page.js';
import { parseLimit, parseSeq } from './query.js';
import { rawJsonResponse } from './respond.js';

const QUERY_KEYS = new Set(['after', 'limit']);

/**
 * `GET /events?after=SEQ&limit=N`, signed: the caller's own queue (the key is the signer's), in seq
 * order, expired events skipped, nothing removed. Parameters are checked after the signature, so an
 * unsigned caller learns nothing about what the box accepts.
 */
export async function fetchEvents(c: Context, box: BoxContext): Promise<Response> {
  const key = await authenticate(c, box, undefined, 'reads');
  const query = c.req.query();
  for (const name of Object.keys(query)) {
    if (!QUERY_KEYS.has(name)) throw new BoxApiError('bad_request', { message: 'unknown query parameter' });
  }
  const after = parseSeq(query.after, 'after');
  const limit = parseLimit(query.limit);
  const page = await box.options.store.fetchText(key, after, limit, box.options.now());
  return rawJsonResponse(200, eventsPageText(page));
}
