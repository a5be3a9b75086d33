import {
  coreMethods,
  type JsonRpcNotification,
  type JsonRpcRequest,
  NotAuthorizedError,
  type ParamsOf,
  ParticipantNotFoundError,
  RateLimitedError,
} from '@wmp/jsonrpc-envelope';
import { newMessageId, type SessionRecord, type WmpContext } from '@wmp/session';
import type { MlsGroupStore } from '../../storage/contracts/mls-group-store.js';
import { wantsEvidence } from '../evidence/evidence-policy.js';
import { type EvidenceWitness, settleRefused } from '../evidence/evidence-witness.js';
import { acceptForwarded, type InboundDeps } from '../federation/inbound.js';
import { checkEncryptedDeliver } from '../mls/encrypted-deliver.js';
import type { Presence } from '../presence/presence.js';
import { checkRecipients, isGroupSession, recipientsOf } from '../routing/recipients.js';
import { type Router, routedResult, routedStatus } from '../routing/route.js';
import { wantsStatuses } from '../statuses/statuses.js';
import { scheduledAt } from '../support/lifetime.js';
import type { RelayLimits, RelayTimings } from '../support/limits.js';
import type { RefusalLog } from '../support/refusals.js';
import type { ResolvedRegistered } from '../support/registered.js';
import { checkEvidenceSignature, type EvidenceSignatureOptions, refusalReason } from './evidence-submission.js';
import { expiryOf } from './expiry.js';
import { senderMessageId } from './message-ids.js';
import { type Party, peerOriginOf, peerRelayOf } from './routed/route-record.js';

/** What a deliver passes through: the checks here and in the MLS room, then routing. */
export interface DeliverDeps {
  readonly router: Pick<Router, 'routedMessage' | 'routeToRecipients'>;
  /** Scheduled delivery on or off (`deliver_after`). */
  readonly registered: Pick<ResolvedRegistered, 'scheduledDelivery'>;
  /** The MLS group a group session's encrypted delivers are checked against. */
  readonly groups: Pick<MlsGroupStore, 'get'>;
  readonly presence: Pick<Presence, 'get'>;
  /** Messages a peer relay forwards for its users: federation's, when it is on. */
  readonly inbound: InboundDeps | undefined;
  readonly limits: Pick<RelayLimits, 'maxFanoutBytes' | 'maxMessageBytes'>;
  readonly timings: RelayTimings;
  readonly refusals: RefusalLog;
  /** The evidence profile, when the relay offers it: what a session under evidence submits is recorded. */
  readonly evidence: (EvidenceSignatureOptions & { readonly witness: EvidenceSubmissions }) | undefined;
  now(): number;
}

/** What a deliver under evidence asks of the evidence room. */
export type EvidenceSubmissions = Pick<EvidenceWitness, 'checkRoom' | 'open' | 'refused'>;

/**
 * `wmp.message.deliver` at the relay (docs/architecture.md, "Delivering a message"): the
 * recipients' durable queues first, then live forwarding, statuses, and the request-form answer
 * (-31014 when no queue took it). An encrypted deliver on a group session whose MLS group the relay
 * orders is checked against the group's epoch first; the relay never decrypts it.
 */
export function deliverHook(s: DeliverDeps) {
  return async (params: ParamsOf<'wmp.message.deliver'>, ctx: WmpContext): Promise<unknown> => {
    const sender = ctx.sender;
    const session = ctx.session as SessionRecord;
    if (sender === undefined) throw new NotAuthorizedError({ reason: 'authenticate first' });
    const request = (ctx.request.params ?? {}) as Record<string, unknown>;
    const claimed = params.wmp.sender;
    // A delegate sends for its principal (core §3.3): the engine verified its `sender_delegate`.
    const author = ctx.delegation?.principal;
    if (author === undefined && claimed !== undefined && claimed !== sender) {
      // Only a peer relay forwards for others (the session engine left this check to us).
      if (s.inbound === undefined) throw new NotAuthorizedError({ reason: 'sender is not the authenticated identity' });
      return acceptForwarded(s.inbound, request, { peerId: sender, connection: ctx.connection, session });
    }
    const evidence = s.evidence !== undefined && wantsEvidence(session);
    const attempt: Attempt = { opened: false };
    try {
      const recipients = recipientsOf(params, session, sender);
      const group = isGroupSession(session) ? session.id : undefined;
      if (group !== undefined && params.wmp.encrypted === true) {
        checkEncryptedDeliver(params, await s.groups.get(group));
      }
      if (group === undefined) checkRecipients(params.to ?? []);
      if (evidence) await checkEvidenceSignature(s.evidence!, request, sender);
      return await routeDeliver(
        s,
        {
          params,
          request,
          session,
          sender,
          author: author ?? sender,
          recipients,
          group,
          notify: wantsStatuses(session),
          isRequest: ctx.requestId !== undefined,
          ctx,
          evidence,
        },
        attempt,
      );
    } catch (e) {
      // Refused before its case opened: a record of its own (the case records later refusals).
      if (evidence && !attempt.opened) await refusedSubmission(s, session, sender, request, e);
      throw e;
    }
  };
}

/** How far one deliver got: its case opened (a refusal after that is recorded in the case). */
interface Attempt {
  opened: boolean;
}

/** `submission_rejected` for a deliver of a session under evidence refused before it was stored. */
async function refusedSubmission(
  s: DeliverDeps,
  session: SessionRecord,
  sender: string,
  request: Record<string, unknown>,
  e: unknown,
): Promise<void> {
  const reason = refusalReason(e);
  if (reason === undefined) return;
  const wmp = (request.wmp ?? {}) as Record<string, unknown>;
  const named = [wmp.message_id, wmp.client_message_id].find((id) => typeof id === 'string' && id.length <= 256);
  const message = { jsonrpc: '2.0' as const, method: 'wmp.message.deliver', params: request };
  await s.evidence?.witness.refused(session, sender, message, (named as string | undefined) ?? newMessageId(), reason);
}

interface DeliverInput {
  readonly params: ParamsOf<'wmp.message.deliver'>;
  /** The params as they came (the content is forwarded untouched). */
  readonly request: Record<string, unknown>;
  /** The session it came on (its `offline.ttl`, its id and version in the answer). */
  readonly session: SessionRecord;
  /** Who sent it: its statuses go there, and its shares are charged. */
  readonly sender: string;
  /** Its `wmp.sender`: the sender, or the principal a delegate sent it for. */
  readonly author: string;
  readonly recipients: readonly string[];
  /** The session named in what is forwarded: a group or a routed session. */
  readonly group: string | undefined;
  /** The sender asked for statuses (they are kept for it while it is away). */
  readonly notify: boolean;
  readonly isRequest: boolean;
  readonly ctx: WmpContext;
  /** Recipients known to be at home at a peer relay, by that relay's origin (a routed session's other party). */
  readonly homes?: ReadonlyMap<string, string>;
  /** The session negotiated evidence: the message is recorded (its case opens before it is stored). */
  readonly evidence: boolean;
}

/**
 * One deliver, stored and forwarded: expiry, the message id (a notification may carry the
 * sender's own: its statuses name it; a request's result gives ours), the fan-out bound, the
 * routed message, the durable append, and the request-form answer.
 */
async function routeDeliver(
  s: DeliverDeps,
  input: DeliverInput,
  attempt: Attempt = { opened: false },
): Promise<unknown> {
  const { params, request, session, sender, recipients, group, isRequest, evidence } = input;
  const now = s.now();
  const dueAt = scheduledAt(params.wmp, s.registered.scheduledDelivery, s.timings, now);
  const expiresAt = expiryOf(params.wmp.expires_at, session, s.timings, now, dueAt);
  const chosen = isRequest ? undefined : senderMessageId(params.wmp);
  const messageId = chosen ?? newMessageId();
  refuseLargeFanout(s, request, recipients.length);
  if (evidence) await s.evidence?.witness.checkRoom();
  const message = await s.router.routedMessage(
    'wmp.message.deliver',
    request,
    input.author,
    messageId,
    group,
    {},
    evidence,
  );
  // Under evidence the case opens before anything is stored: no delivery can come before it.
  const opened = evidence
    ? await s.evidence?.witness.open({ message, messageId, sender: input.author, recipients, expiresAt }, { session })
    : undefined;
  attempt.opened = evidence;
  let outcome: Awaited<ReturnType<DeliverDeps['router']['routeToRecipients']>>;
  try {
    outcome = await s.router.routeToRecipients({
      sender,
      connection: input.ctx.connection,
      notify: input.notify,
      messageId,
      expiresAt,
      group,
      messages: new Map(recipients.map((r) => [r, message])),
      isRequest,
      senderChoseId: chosen !== undefined,
      evidence,
      ...(input.homes === undefined ? {} : { homes: input.homes }),
    });
    if (isRequest && outcome.accepted === 0 && outcome.full) throw outcome.full;
  } catch (e) {
    await settleRefused(opened, e);
    throw e;
  }
  await opened?.accepted();
  if (!isRequest) return undefined;
  return routedResult(session, messageId, await routedStatus(outcome));
}

/**
 * `wmp.message.deliver` on a session routed between two parties (transport §6.2): checked against
 * the relay's schema (it stores what it forwards), then stored and forwarded to the other party
 * like any deliver, naming the routed session; statuses go to the sender's hop connections. A
 * party at another relay is reached through that relay's outbox (the route names it: no lookup);
 * what that relay passes on for its party is taken as any forward of a peer is (inbound.ts).
 */
export async function deliverOnRoute(
  s: DeliverDeps,
  request: JsonRpcRequest | JsonRpcNotification,
  session: SessionRecord,
  from: Party,
  to: Party,
  ctx: WmpContext,
): Promise<unknown> {
  const params = coreMethods.validateParams('wmp.message.deliver', request.params) as ParamsOf<'wmp.message.deliver'>;
  if (params.to?.some((r) => r !== to.id)) {
    throw new ParticipantNotFoundError({ participant: params.to?.find((r) => r !== to.id) });
  }
  const raw = (request.params ?? {}) as Record<string, unknown>;
  if (from.via !== undefined) {
    if (s.inbound === undefined) throw new NotAuthorizedError({ reason: 'federation is off' });
    return acceptForwarded(s.inbound, raw, {
      peerId: peerRelayOf(from.via),
      connection: ctx.connection,
      session,
      route: { id: session.id, recipient: to.id },
    });
  }
  const evidence = s.evidence !== undefined && wantsEvidence(session);
  if (evidence) await checkEvidenceSignature(s.evidence!, raw, from.id);
  const home = to.via === undefined ? undefined : peerOriginOf(to.via);
  return routeDeliver(s, {
    params,
    request: raw,
    session,
    sender: from.id,
    author: from.id,
    recipients: [to.id],
    group: session.id,
    notify: s.presence.get(from.id, ctx.connection)?.statuses ?? false,
    isRequest: 'id' in request,
    ctx,
    ...(home === undefined ? {} : { homes: new Map([[to.id, home]]) }),
    evidence,
  });
}

/**
 * The fan-out cap (recipients x bytes) checked on the request alone, before the relay signs and
 * serialises anything (decision 0230: cheap refusals first): a ~1 MiB deliver to 256 made-up
 * recipients is refused for the cost of a walk over its content instead of a relay-chain
 * signature over it and a serialisation. The content (all but `wmp`) is part of what is routed,
 * and `jsonLengthAtLeast` never exceeds its UTF-8 bytes, so nothing the exact check in
 * `routeToRecipients` would take is refused here. Only when the cap can be reached at all.
 */
function refuseLargeFanout(s: DeliverDeps, request: Record<string, unknown>, recipients: number): void {
  const { maxFanoutBytes, maxMessageBytes } = s.limits;
  if (recipients * maxMessageBytes <= maxFanoutBytes) return;
  const { wmp: _wmp, ...content } = request;
  if (recipients * jsonLengthAtLeast(content) <= maxFanoutBytes) return;
  s.refusals.note('fanout');
  throw new RateLimitedError({ reason: 'fan-out' });
}

/**
 * A lower bound of the length of `value` as JSON, in O(nodes) rather than O(bytes): a string
 * counts its UTF-16 length and its quotes (at most its UTF-8 bytes), everything else at least one
 * character. The value was parsed under the message's depth limit.
 */
export function jsonLengthAtLeast(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 1;
  // Brackets, and one comma between two members.
  if (Array.isArray(value)) {
    let n = 1 + value.length;
    for (const item of value) n += jsonLengthAtLeast(item);
    return Math.max(2, n);
  }
  const entries = Object.entries(value);
  let n = 1 + entries.length;
  for (const [key, item] of entries) n += key.length + 3 + jsonLengthAtLeast(item);
  return Math.max(2, n);
}
