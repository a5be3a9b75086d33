import {
  completeEventVerification,
  type EventVerdict,
  type OhanEvent,
  prepareEventVerification,
  type VerifyEventOptions,
  verifyEvent,
} from '@wmp/ohan-seal';
import type { Context } from 'hono';
import type { PublishRefusal } from '../storage/contracts/box-store.js';
import { limitKey } from './auth.js';
import { parseEventBody, readBody } from './body.js';
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
 * `POST /events`: the body is read under a hard cap, parsed strictly, verified by
 * docs/ohan-profile.md, "Validation", with the box's clock and limits (the size checked is the
 * body's, as received), and only then handed to the store, whose answer is given after it is
 * committed: 202 stored, 200 already there.
 */
export async function publishEvent(c: Context, box: BoxContext): Promise<Response> {
  const { maxBodyBytes, maxEventBytes, skewSeconds, now, store } = box.options;
  const bytes = await readBody(c.req.raw, maxBodyBytes, box.options);
  const parsed = parseEventBody(bytes);
  if (parsed === undefined) throw new BoxApiError('invalid_event', { reason: 'json' });
  const { value, json } = parsed;
  const verdict = await verify(box, value, { now: now(), skewSeconds, maxEventBytes, size: bytes.byteLength });
  if (!verdict.ok) {
    if (verdict.reason === 'too_large') throw new BoxApiError('too_large');
    throw new BoxApiError('invalid_event', { reason: verdict.reason });
  }
  const event = value as OhanEvent;
  // Counted against the verified sender only: a forged `from_key` never gets this far, so nobody
  // can spend someone else's budget.
  await limitKey(box, event.from_key);
  // The body is the event's JSON exactly, unless it carried a `seq` (which the box drops).
  const result = await store.publish(event, json === undefined || 'seq' in event ? undefined : json);
  if (result.status === 'refused') throw new BoxApiError(REFUSALS[result.code]);
  // After the commit; never rejects (a lost wake-up is caught by the reader's reconnect).
  if (result.status === 'stored') void box.wakeUps.publish(event.to, result.seq);
  return jsonResponse(result.status === 'stored' ? 202 : 200, { id: result.id });
}

/** `verifyEvent`, with the Ed25519 check on the verify workers when the box has them. */
async function verify(box: BoxContext, value: unknown, options: VerifyEventOptions): Promise<EventVerdict> {
  if (box.verifier === undefined) return verifyEvent(value, options);
  const prepared = prepareEventVerification(value, options);
  if (!prepared.ok) return prepared;
  return completeEventVerification(prepared, await box.verifier.verify(prepared.check));
}
