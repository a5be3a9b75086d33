import { decodeEd25519Multikey } from '@wmp/jcs-signing';
import { cardStampStrength, verifyCard } from '@wmp/ohan-seal';
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
 * stored one (201), an older or equal one changes nothing but the expiry (200). The directory is
 * bounded by its cap (a full one is `box_full`), card expiry and the per-key and per-source
 * rates; an operator may also ask a stamp of `cardStampBits` on the card of a key the box does
 * not know yet (no card, no events), `stamp_required` without it. Directory boxes only.
 */
export async function postCard(c: Context, box: BoxContext): Promise<Response> {
  const { store, now } = box.options;
  const bytes = await readBody(c.req.raw, MAX_CARD_BYTES, box.options);
  const verdict = verifyCard(parseBody(bytes));
  if (!verdict.ok) throw new BoxApiError('invalid_card', { reason: verdict.reason });
  const { card } = verdict;
  await limitKey(box, card.key);
  const at = now();
  if (cardStampStrength(card) < store.limits.cardStampBits && !(await store.knows(card.key, at))) {
    throw new BoxApiError('stamp_required');
  }
  const result = await store.putCard(card, at);
  if (result === 'full') throw new BoxApiError('box_full');
  return jsonResponse(result === 'stale' ? 200 : 201, { key: card.key });
}

/** `POST /cards/lookup {key}`: the stored card, or 404. The key travels in the body, never the URL. */
export async function lookupCard(c: Context, box: BoxContext): Promise<Response> {
  const bytes = await readBody(c.req.raw, MAX_LOOKUP_BYTES, box.options);
  const { key } = objectWith(parseBody(bytes), ['key']);
  let valid = false;
  try {
    valid = typeof key === 'string' && decodeEd25519Multikey(key).length === 32;
  } catch {
    valid = false;
  }
  if (!valid) throw new BoxApiError('bad_request', { message: 'key must be an Ed25519 multikey' });
  const card = await box.options.store.getCard(key as string, box.options.now());
  if (card === undefined) throw new BoxApiError('not_found');
  return jsonResponse(200, card);
}
