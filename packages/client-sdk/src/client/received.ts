import { isRecord, str } from './json-values.js';
import type { MessageProofs } from './proofs/types.js';
import type { MessageStatusEvent, ReceivedMessage } from './types.js';

const STATUSES: ReadonlySet<string> = new Set(['queued', 'delivered', 'expired', 'dropped']);

/** A status the relay names (`queued`, `delivered`, `expired`, `dropped`), or undefined. */
export function statusName(x: unknown): MessageStatusEvent['status'] | undefined {
  return typeof x === 'string' && STATUSES.has(x) ? (x as MessageStatusEvent['status']) : undefined;
}

/** The relay's id of a routed message or kept status (`wmp.message_id`). */
export function queueIdOf(params: Record<string, unknown>): string | undefined {
  return isRecord(params.wmp) ? str(params.wmp.message_id) : undefined;
}

/**
 * A status's reason as it came: its `reason`, and the cause a relay passed on in `data.reason`
 * (a peer's refusal: `peer_refused: sender_homed_here`), else `data.reason` alone.
 */
function reasonOf(params: Record<string, unknown>): string | undefined {
  const reason = str(params.reason);
  const cause = isRecord(params.data) ? str(params.data.reason) : undefined;
  if (reason === undefined) return cause;
  return cause === undefined || cause === reason ? reason : `${reason}: ${cause}`;
}

/** A `wmp.message.status` as the application sees it; undefined when it names no message or status. */
export function statusOf(params: Record<string, unknown>): MessageStatusEvent | undefined {
  const messageId = str(params.message_id);
  const status = statusName(params.status);
  if (messageId === undefined || status === undefined) return undefined;
  return {
    messageId,
    status,
    recipient: str(params.recipient),
    queuedUntil: str(params.queued_until),
    reason: reasonOf(params),
  };
}

/** A `wmp.message.deliver` as the application sees it. */
export function receivedMessage(
  params: Record<string, unknown>,
  sessionId: string | undefined,
  group: string | undefined,
  via: ReceivedMessage['via'],
  from: string | undefined,
  proofs: MessageProofs,
): ReceivedMessage {
  const wmp = isRecord(params.wmp) ? params.wmp : {};
  return {
    via,
    id: str(wmp.message_id),
    clientMessageId: str(wmp.client_message_id),
    from,
    to: Array.isArray(params.to) ? params.to.filter((t): t is string => typeof t === 'string') : undefined,
    sessionId,
    group,
    contentType: str(params.content_type),
    body: params.body,
    params,
    signature: proofs.signature,
    relayChain: proofs.relayChain,
    timestamp: proofs.timestamp,
  };
}
