import { relayChainWith } from '@wmp/jcs-signing';
import { type JsonRpcNotification, RateLimitedError, rfc3339, utf8Length } from '@wmp/jsonrpc-envelope';
import type { Connection, SessionRecord } from '@wmp/session';
import type { AppendResult } from '../storage/contracts/queue-store.js';
import { RelayQueueFullError } from '../storage/errors.js';
import type { Federation } from './federation/federation.js';
import type { RoutedMessage } from './forwarder.js';
import { metaFor, type RelayServices } from './services.js';

/**
 * The message as the relay forwards and stores it: the sender's content untouched, `wmp` with
 * the authenticated sender, the relay's message id, the group session (hop messages carry none:
 * each recipient gets it on its own session), any `extra` metadata and this relay's signed
 * relay_chain entry. A `relay_chain` a client sent is dropped: a client is no relay, and entries
 * nobody verified must not reach recipients as if a relay had vouched for them.
 */
export async function routedMessage(
  s: RelayServices,
  method: string,
  params: Record<string, unknown>,
  sender: string,
  messageId: string,
  group: string | undefined,
  extra: Record<string, unknown> = {},
): Promise<RoutedMessage> {
  const { wmp = {}, ...content } = params as { wmp?: Record<string, unknown> };
  const { session_id: _ignored, relay_chain: claimed, ...meta } = wmp;
  if (claimed !== undefined) s.refusals.note('client_relay_chain');
  const routedWmp: Record<string, unknown> = {
    ...meta,
    ...extra,
    sender,
    message_id: messageId,
    ...(group ? { session_id: group } : {}),
  };
  const message: JsonRpcNotification = { jsonrpc: '2.0', method, params: { ...content, wmp: routedWmp } };
  // The message is ours (built just above): the signed chain goes in place, without a copy.
  routedWmp.relay_chain = await relayChainWith(message, s.hop());
  return message as RoutedMessage;
}

export interface RouteInput {
  readonly sender: string;
  /** The sender's session asked for statuses (they are kept for it while it is away). */
  readonly notify: boolean;
  /** The sender's connection: routed bytes count against it and its source too. */
  readonly connection: Connection;
  readonly messageId: string;
  readonly expiresAt: number;
  /** The group session the message belongs to, if any. */
  readonly group: string | undefined;
  /** What each recipient gets (most share one object; a Welcome goes only to its participant). */
  readonly messages: ReadonlyMap<string, RoutedMessage>;
  /** The request form: a message that no recipient could take is answered with -31014 instead. */
  readonly isRequest: boolean;
  /** Spends the routed bytes; default the sender's, connection's and source's budgets (a peer relay has its own). */
  readonly charge?: (bytes: number) => Promise<void>;
}

export interface RouteOutcome {
  /** Recipients whose queue took it (or already had it). */
  readonly accepted: number;
  /** The first full queue's error, when some recipient's queue was full. */
  readonly full: RelayQueueFullError | undefined;
}

type Outcome = { readonly recipient: string } & (
  | { readonly appended: AppendResult; readonly message: RoutedMessage }
  | { readonly full: RelayQueueFullError }
);

/**
 * Routes one message to its recipients (DESIGN §3): a durable append to every recipient's queue
 * before anything is acknowledged, then forwarding from the queue to live connections, `queued`
 * to the sender for recipients with none, `dropped` for full queues (or, for a request that no
 * recipient took, nothing: the caller answers -31014).
 */
export async function routeToRecipients(s: RelayServices, input: RouteInput): Promise<RouteOutcome> {
  const { sender, messageId, expiresAt, group } = input;
  // Each distinct message is serialised once and its text shared by every recipient's append.
  const bodies = new Map<RoutedMessage, { text: string; bytes: number }>();
  let fanout = 0;
  for (const message of input.messages.values()) {
    let body = bodies.get(message);
    if (body === undefined) {
      const text = JSON.stringify(message);
      body = { text, bytes: utf8Length(text) };
      bodies.set(message, body);
    }
    fanout += body.bytes;
  }
  // Bounded before anything is stored: one request, and one sender over time (DESIGN §7).
  if (fanout > s.config.limits.maxFanoutBytes) {
    s.refusals.note('fanout');
    throw new RateLimitedError({ reason: 'fan-out' });
  }
  if (input.charge) await input.charge(fanout);
  else await s.limiters.chargeRouted(sender, input.connection, fanout, s.refusals);
  // Recipients at home at another relay go to that peer's outbox (DESIGN §3 federation).
  const remote = s.federation === undefined ? undefined : await remoteRecipients(s.federation, input.messages, sender);
  const outcomes = await Promise.all(
    [...input.messages].map(([recipient, message]) => {
      const peer = remote?.get(recipient);
      const entry = { id: messageId, sender, notify: input.notify, expiresAt };
      const body = bodies.get(message)!;
      // With the UTF-8 length counted above: else the queue walks the whole text again.
      const appended =
        peer !== undefined && s.federation !== undefined
          ? s.federation.append(peer, recipient, message, entry)
          : s.queue.append(
              recipient,
              { id: messageId, sender, body: body.text, notify: input.notify },
              { expiresAt, bytes: body.bytes },
            );
      return appended.then(
        (appended): Outcome => ({ recipient, appended, message }),
        (e: unknown): Outcome => {
          if (e instanceof RelayQueueFullError) return { recipient, full: e };
          throw e;
        },
      );
    }),
  );
  s.metrics.routed++;

  const accepted = outcomes.filter((o) => 'appended' in o).length;
  for (const o of outcomes) {
    if ('full' in o) {
      // The request form with no recipient accepted answers -31014 instead (one answer, no status).
      if (!input.isRequest || accepted > 0)
        s.statuses.send(
          sender,
          { message_id: messageId, status: 'dropped', recipient: o.recipient, reason: o.full.reason },
          input.notify,
        );
      continue;
    }
    if (o.appended.status === 'exists') continue; // a retry of a message it already holds
    const peer = remote?.get(o.recipient);
    if (peer !== undefined) {
      // Its home relay sends the statuses (they come back over the peer link).
      s.federation?.kick(peer);
      continue;
    }
    if (group) reachGroupMembers(s, group, o.recipient, o.appended.seq);
    const recipient = o.recipient;
    void s.forwarder.offerRouted(recipient, o.appended.seq, o.message).then((nowhere) => {
      if (!nowhere) return;
      s.statuses.send(
        sender,
        { message_id: messageId, status: 'queued', recipient, queued_until: rfc3339(expiresAt) },
        input.notify,
      );
    });
  }
  const full = outcomes.find((o): o is Outcome & { full: RelayQueueFullError } => 'full' in o)?.full;
  return { accepted, full };
}

/**
 * The recipients at home at another relay, with that relay's origin, after the ERDS check of
 * each (-31005 before anything is stored).
 */
async function remoteRecipients(
  federation: Federation,
  messages: ReadonlyMap<string, RoutedMessage>,
  sender: string,
): Promise<Map<string, string> | undefined> {
  let remote: Map<string, string> | undefined;
  for (const [recipient, message] of messages) {
    const origin = await federation.remoteHomeOf(recipient, sender);
    if (origin === undefined) continue;
    await federation.checkErds(origin, message.params);
    remote ??= new Map();
    remote.set(recipient, origin);
  }
  return remote;
}

/**
 * Joined participants of a group that never registered still get its messages live: give each
 * connection bound to the group as `recipient` an endpoint that starts at this message.
 */
function reachGroupMembers(s: RelayServices, group: string, recipient: string, seq: number): void {
  for (const connection of s.connections.connectionsOf(group)) {
    if (connection.sessions.get(group)?.identity === recipient) s.presence.ensure(recipient, connection, seq - 1, true);
  }
}

/** The request-form answer of a routed message. */
export function routedResult(session: SessionRecord, messageId: string): Record<string, unknown> {
  return { wmp: metaFor(session.id, session.version), message_id: messageId, status: 'queued' };
}
