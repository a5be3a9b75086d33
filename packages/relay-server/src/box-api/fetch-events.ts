import type { Context } from 'hono';
import { authenticate } from './auth.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { parseLimit, parseSeq } from './query.js';
import { rawJsonResponse } from './respond.js';

const QUERY_KEYS = new Set(['after', 'limit']);

/**
 * `GET /events?after=SEQ&limit=N`, signed: the caller's own queue (the key is the signer's), in seq
 * order, expired events skipped, nothing removed. Parameters are checked after the signature, so an
 * unsigned caller learns nothing about what the box accepts.
 */
export async function fetchEvents(c: Context, box: BoxContext): Promise<Response> {
  const key = await authenticate(c, box);
  const query = c.req.query();
  for (const name of Object.keys(query)) {
    if (!QUERY_KEYS.has(name)) throw new BoxApiError('bad_request', { message: 'unknown query parameter' });
  }
  const after = parseSeq(query.after, 'after');
  const limit = parseLimit(query.limit);
  const page = await box.options.store.fetchText(key, after, limit, box.options.now());
  // The stored JSON goes out as it is, with `seq` added: no parse and re-encode per event.
  const events = page.items.map((item) => `${item.json.slice(0, -1)},"seq":${item.seq}}`).join(',');
  return rawJsonResponse(200, `{"events":[${events}],"next":${page.next},"more":${page.more}}`);
}
