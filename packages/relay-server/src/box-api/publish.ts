import { type OhanEvent, verifyEvent } from '@wmp/ohan-seal';
import type { Context } from 'hono';
import type { PublishRefusal } from '../box-store.js';
import { limitKey } from './auth.js';
import { parseBody, readBody } from './body.js';
import type { BoxContext } from './context.js';
import { BoxApiError, type BoxErrorCode } from './errors.js';
import { jsonResponse } from './respond.js';

/** A store refusal is already a wire code; the map keeps the two vocabularies checked against each other. */
const REFUSALS: Readonly<Record<PublishRefusal, BoxErrorCode>> = Object.freeze({
  stamp_required: 'stamp_required',
  not_registered: 'not_registered',
  sender_limit: 'sender_limit',
  recipient_full: 'recipient_full',
  box_full: 'box_full',
});

/**
 * `POST /events`: the body is read under a hard cap, parsed strictly, verified by DESIGN §4.5 with
 * the box's clock and limits (the size checked is the body's, as received), and only then handed
 * to the store, whose answer is given after it is committed: 202 stored, 200 already there.
 */
export async function publishEvent(c: Context, box: BoxContext): Promise<Response> {
  const { maxBodyBytes, maxEventBytes, skewSeconds, now, store } = box.options;
  const bytes = await readBody(c.req.raw, maxBodyBytes);
  const value = parseBody(bytes);
  if (value === undefined) throw new BoxApiError('invalid_event', { reason: 'json' });
  const verdict = verifyEvent(value, { now: now(), skewSeconds, maxEventBytes, size: bytes.byteLength });
  if (!verdict.ok) {
    if (verdict.reason === 'too_large') throw new BoxApiError('too_large');
    throw new BoxApiError('invalid_event', { reason: verdict.reason });
  }
  const event = value as OhanEvent;
  // Counted against the verified sender only: a forged `from_key` never gets this far, so nobody
  // can spend someone else's budget.
  limitKey(box, event.from_key);
  const result = await store.publish(event);
  if (result.status === 'refused') throw new BoxApiError(REFUSALS[result.code]);
  if (result.status === 'stored') box.notifier.notify(event.to);
  return jsonResponse(result.status === 'stored' ? 202 : 200, { id: result.id });
}
