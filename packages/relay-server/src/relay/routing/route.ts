import { jcs, type RelayHop, relayChainWith } from '@wmp/jcs-signing';
import { type JsonRpcNotification, RateLimitedError, rfc3339, utf8Length } from '@wmp/jsonrpc-envelope';
import type { Connection, SessionRecord } from '@wmp/session';
import type { AppendResult, QueueStore } from '../../storage/contracts/queue-store.js';
import { RelayQueueFullError } from '../../storage/errors.js';
import type { Presence } from '../presence/presence.js';
import type { RelayLimits } from '../support/limits.js';
import type { Logger } from '../support/logger.js';
import { copyMembers } from '../support/members.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { OpsLog } from '../support/ops-events.js';
import type { RefusalLog } from '../support/refusals.js';
import type { RelayEvents } from '../support/relay-events.js';
import type { RelayLimiters } from '../support/relay-limiters.js';
import { metaFor } from '../support/session-meta.js';
import { checkConsignment } from './consignment-checks.js';
import type { Forwarder } from './forwarder.js';
import { type Handover, type HandoverDeps, handOver } from './handover.js';
import { outboxKey } from './outbox-entry.js';
import type { RemoteHomes } from './remote-homes.js';
import type { RoutedMessage } from './routed-message.js';

/** The connections bound to a session (the session engine knows them). */
export interface GroupConnections {
  connectionsOf(sessionId: string): readonly Connection[];
}

/** What routing takes from the rooms below it and from the session engine, and the events it raises. */
export interface RouterDeps {
  readonly limits: Pick<RelayLimits, 'maxFanoutBytes'>;
  readonly queue: Pick<QueueStore, 'append' | 'after'>;
  readonly forwarder: Pick<Forwarder, 'offerRouted'>;
  readonly presence: Pick<Presence, 'ensure'>;
  readonly connections: GroupConnections;
  /** Recipients at home at a peer relay, when federation is on. */
  readonly remote: RemoteHomes | undefined;
  /** The statuses a route gives rise to (`queued`, `dropped`) go to the status notifier; a drop under evidence to evidence. */
  readonly events: Pick<RelayEvents, 'status' | 'droppedUnderEvidence'>;
  readonly limiters: Pick<RelayLimiters, 'chargeRouted'>;
  readonly refusals: RefusalLog;
  readonly metrics: RelayMetrics;
  readonly ops: OpsLog;
  readonly logger: Logger;
  /**
   * This relay as a hop of relay_chain (its URL is known once it listens), signed or not by the
   * relay's `relayChainSignatures` setting; a message under evidence is signed whatever it says.
   */
  hop(): RelayHop;
  /** How a message reaches a recipient here: at once, when due, or once it consents. */
  readonly handover: HandoverDeps;
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
  /**
   * `messageId` is the sender's own (a notification's `wmp.message_id`): a queue that already
   * holds that id for another message (another sender's, or other content) refuses it (`dropped`).
   */
  readonly senderChoseId?: boolean;
  /** Spends the routed bytes; default the sender's, connection's and source's budgets (a peer relay has its own). */
  readonly charge?: (bytes: number) => Promise<void>;
  /**
   * Recipients known to be at home at a peer relay, by its origin: the other party of a session
   * routed through that relay, which knows the session too (no lookup; what goes to its outbox
   * keeps naming the session).
   */
  readonly homes?: ReadonlyMap<string, string>;
  /** The message is under evidence: queued so, and what happens to it is recorded. */
  readonly evidence?: boolean;
}

export interface RouteOutcome {
  /** Recipients whose queue took it (or already had it). */
  readonly accepted: number;
  /** The first full queue's error, when some recipient's queue was full. */
  readonly full: RelayQueueFullError | undefined;
  /**
   * The request form: per recipient appended here now, whether it is online nowhere (what
   * `Forwarder.offerRouted` resolves); a request's result says from them what happened.
   */
  readonly offers: readonly Promise<boolean>[];
}

type Outcome = { readonly recipient: string } & (
  | {
      readonly appended: AppendResult;
      readonly message: RoutedMessage;
      /** What the recipient's queue got to offer its connections (the message, a notice); undefined: held, or a peer's. */
      readonly offer: Handover['offer'];
      /** The queue the message went to (the recipient's, one holding it, or a peer's outbox). */
      readonly key: string;
    }
  | { readonly full: RelayQueueFullError }
);

/**
 * Routing (docs/architecture.md, "Delivering a message"): builds the routed message and stores it
 * durably for every recipient, here or in the outbox of the recipient's home relay, then hands it
 * to the forwarder; the statuses a route gives rise to are raised as events. One per relay, built
 * by `createRelayCore`.
 */
export class Router {
  readonly #deps: RouterDeps;

  constructor(deps: RouterDeps) {
    this.#deps = deps;
  }

  /**
   * The message as the relay forwards and stores it: the sender's content untouched, `wmp` with
   * the authenticated sender, the relay's message id, the group session (hop messages carry none:
   * each recipient gets it on its own session), any `extra` metadata and this relay's relay_chain
   * entry: signed and marked `registered` under evidence (core §5.7), otherwise signed as the
   * relay's setting says (an entry left unsigned is signed before the message leaves for a peer).
   * A `relay_chain` a client sent is dropped: a client is no relay, and entries nobody verified
   * must not reach recipients as if a relay had vouched for them.
   */
  async routedMessage(
    method: string,
    params: Record<string, unknown>,
    sender: string,
    messageId: string,
    group: string | undefined,
    extra: Record<string, unknown> = {},
    underEvidence = false,
  ): Promise<RoutedMessage> {
    const s = this.#deps;
    const wmp = (params.wmp ?? {}) as Record<string, unknown>;
    if (wmp.relay_chain !== undefined) s.refusals.note('client_relay_chain');
    // Member by member rather than by spreads (decision 0733): the same members in the same order.
    const routedWmp = copyMembers(copyMembers<Record<string, unknown>>({}, wmp, NOT_ROUTED_WMP), extra);
    routedWmp.sender = sender;
    routedWmp.message_id = messageId;
    if (group) routedWmp.session_id = group;
    const content = copyMembers<Record<string, unknown>>({}, params, WMP);
    content.wmp = routedWmp;
    const message: JsonRpcNotification = { jsonrpc: '2.0', method, params: content };
    // The message is ours (built just above): the signed chain goes in place, without a copy.
    routedWmp.relay_chain = await relayChainWith(message, underEvidence ? registeredHop(s.hop()) : s.hop());
    return message as RoutedMessage;
  }

  /**
   * Routes one message to its recipients (docs/architecture.md, "Delivering a message"): a durable
   * append to every recipient's queue before anything is acknowledged, then forwarding from the
   * queue to live connections, `queued` to the sender for recipients with none, `dropped` for full
   * queues (or, for a request that no recipient took, nothing: the caller answers -31014).
   */
  async routeToRecipients(input: RouteInput): Promise<RouteOutcome> {
    const s = this.#deps;
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
    // Bounded before anything is stored: one request, and one sender over time
    // (docs/architecture.md, "Bounds").
    if (fanout > s.limits.maxFanoutBytes) {
      s.refusals.note('fanout');
      throw new RateLimitedError({ reason: 'fan-out' });
    }
    if (input.charge) await input.charge(fanout);
    else await s.limiters.chargeRouted(sender, input.connection, fanout, s.refusals);
    // Recipients at home at another relay go to that peer's outbox (docs/architecture.md,
    // "Forwarding").
    const evidence = input.evidence === true;
    const remote =
      s.remote === undefined
        ? undefined
        : await remoteRecipients(s.remote, input.messages, sender, input.homes, evidence);
    // What the recipients here are served: refused before anything is stored (core §3.5).
    const checked = new Set<RoutedMessage>();
    for (const [recipient, message] of input.messages) {
      if (remote?.has(recipient) || checked.has(message)) continue;
      checked.add(message);
      checkConsignment(message, bodies.get(message)!.bytes, s.handover.registered);
    }
    const outcomes = await Promise.all(
      [...input.messages].map(([recipient, message]) => {
        const peer = remote?.get(recipient);
        const routed = group !== undefined && peer !== undefined && input.homes?.get(recipient) === peer;
        const entry = {
          id: messageId,
          sender,
          notify: input.notify,
          evidence,
          expiresAt,
          session: routed ? group : undefined,
        };
        const body = bodies.get(message)!;
        // With the UTF-8 length counted above: else the queue walks the whole text again.
        const handed: Promise<Handover> =
          peer !== undefined && s.remote !== undefined
            ? s.remote
                .append(peer, recipient, message, entry)
                .then((appended) => ({ appended, key: outboxKey(peer), offer: undefined }))
            : handOver(s.handover, recipient, message, {
                id: entry.id,
                sender,
                notify: entry.notify,
                evidence,
                expiresAt,
                body: body.text,
                bytes: body.bytes,
              });
        return handed.then(
          ({ appended, offer, key }): Outcome => ({ recipient, appended, message, offer, key }),
          (e: unknown): Outcome => {
            if (e instanceof RelayQueueFullError) return { recipient, full: e };
            throw e;
          },
        );
      }),
    );
    s.metrics.routed++;

    const accepted = outcomes.filter((o) => 'appended' in o).length;
    const remotely =
      remote === undefined ? 0 : outcomes.filter((o) => 'appended' in o && remote.has(o.recipient)).length;
    s.ops.event('message.accepted', {
      recipients: accepted - remotely,
      remote: remotely,
      refused: outcomes.length - accepted,
    });
    const offers: Promise<boolean>[] = input.isRequest ? [] : NO_OFFERS;
    for (const o of outcomes) {
      if ('full' in o) {
        // The request form with no recipient accepted answers -31014 instead (one answer, no status).
        if (!input.isRequest || accepted > 0) {
          s.events.status(
            sender,
            { message_id: messageId, status: 'dropped', recipient: o.recipient, reason: o.full.reason },
            input.notify,
          );
          if (evidence) s.events.droppedUnderEvidence(sender, messageId, o.recipient, o.full.reason);
        }
        continue;
      }
      const peer = remote?.get(o.recipient);
      if (o.appended.status === 'exists') {
        // A retry of a message it already holds; with an id the sender chose, maybe another message.
        if (input.senderChoseId) void this.#refuseReusedId(input, o.recipient, o.key, o.appended.seq, o.message);
        continue;
      }
      if (peer !== undefined) {
        // Its home relay sends the statuses (they come back over the peer link).
        s.remote?.kick(peer);
        continue;
      }
      // Held for later, or for consent: nothing reaches the recipient's connections now.
      if (o.offer === undefined) continue;
      if (group) this.#reachGroupMembers(group, o.recipient, o.offer.seq);
      const recipient = o.recipient;
      const offered = s.forwarder.offerRouted(
        recipient,
        o.offer.seq,
        o.offer.message,
        bodies.get(o.offer.message)?.text,
      );
      // A notice going out is not the message: it waits for consent, as a held one (`queued`).
      if (input.isRequest && o.offer.message === o.message) offers.push(offered);
      void offered.then((nowhere) => {
        if (!nowhere) return;
        s.events.status(
          sender,
          { message_id: messageId, status: 'queued', recipient, queued_until: rfc3339(expiresAt) },
          input.notify,
        );
      });
    }
    const full = outcomes.find((o): o is Outcome & { full: RelayQueueFullError } => 'full' in o)?.full;
    return { accepted, full, offers };
  }

  /**
   * An id the sender chose was already held at `seq` of `key` (the recipient's queue, one holding
   * it for the recipient, or the outbox of its home relay): a retry of the same message (same sender, same content) is taken once; anything
   * else under that id is refused for that recipient with `dropped` (decision 0363: one sender's id
   * must not make another message vanish as a "retry").
   */
  async #refuseReusedId(
    input: RouteInput,
    recipient: string,
    key: string,
    seq: number,
    message: RoutedMessage,
  ): Promise<void> {
    const s = this.#deps;
    try {
      const page = await s.queue.after(key, seq - 1, 1);
      const held = page.messages[0];
      if (held === undefined || held.seq !== seq) return; // gone meanwhile: nothing to tell it from
      if (held.sender === input.sender && sameContent(held.body, message)) return;
    } catch (e) {
      s.logger.warn('relay.message_id_check_failed', { error: (e as { code?: string }).code ?? 'unknown' });
      return;
    }
    s.refusals.note('message_id_reused');
    s.events.status(
      input.sender,
      { message_id: input.messageId, status: 'dropped', recipient, reason: 'message_id reused' },
      input.notify,
    );
  }

  /**
   * Joined participants of a group that never registered still get its messages live: give each
   * connection bound to the group as `recipient` an endpoint that starts at this message.
   */
  #reachGroupMembers(group: string, recipient: string, seq: number): void {
    const s = this.#deps;
    for (const connection of s.connections.connectionsOf(group)) {
      if (connection.sessions.get(group)?.identity === recipient)
        s.presence.ensure(recipient, connection, seq - 1, true);
    }
  }
}

const NO_OFFERS: Promise<boolean>[] = [];
/** What a client's `wmp` may not set on a routed message: the relay writes them (or drops them). */
const NOT_ROUTED_WMP: ReadonlySet<string> = new Set(['session_id', 'relay_chain']);
const WMP: ReadonlySet<string> = new Set(['wmp']);

/** What a routed request's result says happened (decision 0361). */
export type RoutedStatus = 'accepted' | 'queued';

/**
 * `accepted` when some recipient is online (a live connection here took the message, or a
 * wake-up reached the node of one): it is on disk and being forwarded, `delivered` follows as a
 * status. `queued` when every queue that took it holds it for later (recipients online nowhere,
 * a peer relay's outbox, a retry it already held). Waits only for the wake-ups of recipients with
 * no live connection here (the same wait as their `queued` status).
 */
export async function routedStatus(outcome: RouteOutcome): Promise<RoutedStatus> {
  const { offers } = outcome;
  if (offers.length === 1) return (await offers[0]) ? 'queued' : 'accepted';
  for (const nowhere of await Promise.all(offers)) if (!nowhere) return 'accepted';
  return 'queued';
}

/** Whether a queued body carries the same method and content (params without `wmp`) as `message`. */
function sameContent(body: string, message: RoutedMessage): boolean {
  const held = JSON.parse(body) as RoutedMessage;
  const { wmp: _held, ...heldContent } = held.params;
  const { wmp: _new, ...newContent } = message.params;
  return held.method === message.method && jcs(heldContent) === jcs(newContent);
}

/**
 * The recipients at home at another relay, with that relay's origin, after the ERDS check of
 * each (-31005, or -31009 for a message under evidence to a peer without it, before anything is
 * stored).
 */
async function remoteRecipients(
  homes: RemoteHomes,
  messages: ReadonlyMap<string, RoutedMessage>,
  sender: string,
  known: ReadonlyMap<string, string> | undefined,
  underEvidence: boolean,
): Promise<Map<string, string> | undefined> {
  let remote: Map<string, string> | undefined;
  for (const [recipient, message] of messages) {
    const origin = known?.get(recipient) ?? (await homes.remoteHomeOf(recipient, sender));
    if (origin === undefined) continue;
    await homes.checkErds(origin, message.params, underEvidence);
    remote ??= new Map();
    remote.set(recipient, origin);
  }
  return remote;
}

/** The request-form answer of a routed message: on disk for every recipient that took it, and what happened. */
export function routedResult(
  session: SessionRecord,
  messageId: string,
  status: RoutedStatus = 'queued',
): Record<string, unknown> {
  return { wmp: metaFor(session.id, session.version), message_id: messageId, status };
}

/** A hop under evidence (core §5.7): signed, whatever the setting, and of the `registered` service class. */
export function registeredHop(hop: RelayHop): RelayHop {
  return { ...hop, sign: true, serviceClass: 'registered' };
}
