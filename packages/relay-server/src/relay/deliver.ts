import { appendRelayEntry } from '@wmp/jcs-signing';
import type { JsonRpcNotification, ParamsOf } from '@wmp/jsonrpc-envelope';
import { NotAuthorizedError } from '@wmp/jsonrpc-envelope';
import { type Connection, newMessageId, type SessionRecord, type WmpContext } from '@wmp/session';
import { QueueFullError } from '../errors.js';
import type { AppendResult } from '../queue-store.js';
import { expiryOf } from './expiry.js';
import type { RoutedMessage } from './forwarder.js';
import { isGroupSession, recipientsOf } from './recipients.js';
import { metaFor, type RelayServices, rfc3339 } from './services.js';

type Outcome = { readonly recipient: string } & (
  | { readonly appended: AppendResult }
  | { readonly full: QueueFullError }
);

/**
 * The message as the relay forwards and stores it: the sender's content untouched, `wmp` with
 * the authenticated sender, the relay's message id, the group session (hop messages carry
 * none: each recipient gets it on its own session) and this relay's signed relay_chain entry.
 */
async function routedMessage(
  s: RelayServices,
  request: WmpContext['request'],
  sender: string,
  messageId: string,
  group: string | undefined,
): Promise<RoutedMessage> {
  const { wmp, ...content } = (request.params ?? {}) as { wmp: Record<string, unknown> };
  const { session_id: _ignored, ...meta } = wmp;
  const message: JsonRpcNotification = {
    jsonrpc: '2.0',
    method: 'wmp.message.deliver',
    params: { ...content, wmp: { ...meta, sender, message_id: messageId, ...(group ? { session_id: group } : {}) } },
  };
  return (await appendRelayEntry(message, s.hop())) as RoutedMessage;
}

/**
 * Joined participants of a group that never registered still get its messages live: give each
 * connection bound to the group as `recipient` an endpoint that starts at this message.
 */
function reachGroupMembers(s: RelayServices, server: GroupConnections, group: string, recipient: string, seq: number) {
  for (const connection of server.connectionsOf(group)) {
    if (connection.sessions.get(group)?.identity === recipient) s.presence.ensure(recipient, connection, seq - 1, true);
  }
}

export interface GroupConnections {
  connectionsOf(sessionId: string): Connection[];
}

/**
 * `wmp.message.deliver` at the relay (DESIGN §3): durable append to every recipient's queue
 * before any acknowledgement, then forwarding from the queue to live connections, `queued` to
 * the sender for recipients with none, `dropped` (or -31014) for full queues.
 */
export function deliverHook(s: RelayServices, server: GroupConnections) {
  return async (params: ParamsOf<'wmp.message.deliver'>, ctx: WmpContext): Promise<unknown> => {
    const sender = ctx.sender;
    const session = ctx.session as SessionRecord;
    if (sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    const recipients = recipientsOf(params, session, sender);
    const now = s.now();
    const expiresAt = expiryOf(params.wmp.expires_at, session, s.config.timings, now);
    const group = isGroupSession(session) ? session.id : undefined;
    const messageId = newMessageId();
    const message = await routedMessage(s, ctx.request, sender, messageId, group);
    const body = JSON.stringify(message);

    const outcomes = await Promise.all(
      recipients.map((recipient) =>
        s.queue.append(recipient, { id: messageId, sender, body }, { expiresAt }).then(
          (appended): Outcome => ({ recipient, appended }),
          (e: unknown): Outcome => {
            if (e instanceof QueueFullError) return { recipient, full: e };
            throw e;
          },
        ),
      ),
    );
    s.metrics.routed++;

    const isRequest = ctx.requestId !== undefined;
    const accepted = outcomes.filter((o) => 'appended' in o).length;
    for (const o of outcomes) {
      if ('full' in o) {
        // The request form with no recipient accepted answers -31014 instead (one answer, no status).
        if (!isRequest || accepted > 0)
          s.statuses.send(sender, {
            message_id: messageId,
            status: 'dropped',
            recipient: o.recipient,
            reason: o.full.reason,
          });
        continue;
      }
      if (o.appended.status === 'exists') continue; // ids are fresh, so only a store-level retry lands here
      if (group) reachGroupMembers(s, server, group, o.recipient, o.appended.seq);
      if (s.forwarder.offer(o.recipient, o.appended.seq, message) === 0) {
        s.statuses.send(sender, {
          message_id: messageId,
          status: 'queued',
          recipient: o.recipient,
          queued_until: rfc3339(expiresAt),
        });
      }
    }
    if (!isRequest) return undefined;
    const full = outcomes.find((o): o is Outcome & { full: QueueFullError } => 'full' in o);
    if (accepted === 0 && full) throw full.full;
    return { wmp: metaFor(session.id, session.version), message_id: messageId, status: 'queued' };
  };
}
