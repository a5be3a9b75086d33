import { decodeEd25519Multikey } from '@wmp/jcs-signing';
import { verifyCard } from '@wmp/ohan-seal';
import type { Context } from 'hono';
import { limitKey } from './auth.js';
import { objectWith, parseBody, readBody } from './body.js';
import type { BoxContext } from './context.js';
import { BoxApiError } from './errors.js';
import { jsonResponse } from './respond.js';

/** A card holds at most 16 relay origins of <= 512 characters: 16 KiB is ample. */
const MAX_CARD_BYTES = 16 * 1024;
const MAX_LOOKUP_BYTES = 1024;

/**
 * `POST /cards`: a card signed by its own key is stored (201); a strictly newer `ts` replaces the
 * stored one (201), an older or equal one changes nothing (200). Directory boxes only.
 */
export async function postCard(c: Context, box: BoxContext): Promise<Response> {
  const bytes = await readBody(c.req.raw, MAX_CARD_BYTES);
  const verdict = verifyCard(parseBody(bytes));
  if (!verdict.ok) throw new BoxApiError('invalid_card', { reason: verdict.reason });
  limitKey(box, verdict.card.key);
  const result = await box.options.store.putCard(verdict.card);
  return jsonResponse(result === 'stale' ? 200 : 201, { key: verdict.card.key });
}

/** `POST /cards/lookup {key}`: the stored card, or 404. The key travels in the body, never the URL. */
export async function lookupCard(c: Context, box: BoxContext): Promise<Response> {
  const bytes = await readBody(c.req.raw, MAX_LOOKUP_BYTES);
  const { key } = objectWith(parseBody(bytes), ['key']);
  let valid = false;
  try {
    valid = typeof key === 'string' && decodeEd25519Multikey(key).length === 32;
  } catch {
    valid = false;
  }
  if (!valid) throw new BoxApiError('bad_request', { message: 'key must be an Ed25519 multikey' });
  const card = await box.options.store.getCard(key as string);
  if (card === undefined) throw new BoxApiError('not_found');
  return jsonResponse(200, card);
}
