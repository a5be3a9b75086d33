import type { ParamsOf } from '@wmp/jsonrpc-envelope';
import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { newMessageId, type SessionRecord, type WmpContext } from '@wmp/session';
import { checkEncryptedDeliver } from './encrypted-deliver.js';
import { expiryOf } from './expiry.js';
import { isGroupSession, recipientsOf } from './recipients.js';
import { wantsStatuses } from './registration.js';
import { routedMessage, routedResult, routeToRecipients } from './route.js';
import type { RelayServices } from './services.js';

/**
 * `wmp.message.deliver` at the relay (DESIGN §3): the recipients' durable queues first, then
 * live forwarding, statuses, and the request-form answer (-31014 when no queue took it). An
 * encrypted deliver on a group session whose MLS group the relay orders is checked against the
 * group's epoch first; the relay never decrypts it.
 */
export function deliverHook(s: RelayServices) {
  return async (params: ParamsOf<'wmp.message.deliver'>, ctx: WmpContext): Promise<unknown> => {
    const sender = ctx.sender;
    const session = ctx.session as SessionRecord;
    if (sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    const recipients = recipientsOf(params, session, sender);
    const group = isGroupSession(session) ? session.id : undefined;
    if (group !== undefined && params.wmp.encrypted === true) {
      checkEncryptedDeliver(params, await s.groups.get(group));
    }
    const now = s.now();
    const expiresAt = expiryOf(params.wmp.expires_at, session, s.config.timings, now);
    const messageId = newMessageId();
    const request = (ctx.request.params ?? {}) as Record<string, unknown>;
    const message = await routedMessage(s, 'wmp.message.deliver', request, sender, messageId, group);
    const isRequest = ctx.requestId !== undefined;
    const outcome = await routeToRecipients(s, {
      sender,
      connection: ctx.connection,
      notify: wantsStatuses(session),
      messageId,
      expiresAt,
      group,
      messages: new Map(recipients.map((r) => [r, message])),
      isRequest,
    });
    if (!isRequest) return undefined;
    if (outcome.accepted === 0 && outcome.full) throw outcome.full;
    return routedResult(session, messageId);
  };
}
