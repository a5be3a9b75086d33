import type { Context } from 'hono';
import { MAX_IDS_PER_CALL } from '../storage/contracts/limits.js';
import { authenticate } from './auth.js';
import { objectWith, parseBody, readBody } from './body.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { jsonResponse } from './respond.js';

/** 500 ids of 64 hex chars with quotes and commas is ~34 KiB; the cap leaves room for whitespace. */
const MAX_BODY = 64 * 1024;
const MAX_ID_LENGTH = 128;

/**
 * `POST /delivered {ids}`, signed: removes the named events from the caller's queue only (the queue
 * is the signer's key; another key's ids simply are not there) and answers how many went.
 */
export async function markDelivered(c: Context, box: BoxContext): Promise<Response> {
  const bytes = await readBody(c.req.raw, MAX_BODY, box.options);
  const key = await authenticate(c, box, bytes, 'reads');
  const { ids } = objectWith(parseBody(bytes), ['ids']);
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && id.length <= MAX_ID_LENGTH)) {
    throw new BoxApiError('bad_request', { message: 'ids must be an array of event ids' });
  }
  if (ids.length > MAX_IDS_PER_CALL) {
    throw new BoxApiError('bad_request', { message: `at most ${MAX_IDS_PER_CALL} ids per call` });
  }
  const removed = await box.options.store.delivered(key, ids as string[]);
  return jsonResponse(200, { removed });
}
