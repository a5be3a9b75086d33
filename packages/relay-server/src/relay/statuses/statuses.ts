import { b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import type { SessionRecord } from '@wmp/session';
import type { QueueRemoval, QueueStore } from '../../storage/contracts/queue-store.js';
import type { Presence } from '../presence/presence.js';
import type { Forwarder } from '../routing/forwarder.js';
import { isNoticeId, recipientOfHeldKey } from '../routing/held-keys.js';
import { isOutboxKey, parseOutboxEntryId } from '../routing/outbox-entry.js';
import { type RoutedMessage, STATUS_METHOD } from '../routing/routed-message.js';
import { reachable } from '../support/endpoint.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { RelayEvents } from '../support/relay-events.js';
import { metaFor } from '../support/session-meta.js';
import { STATUSES, type StatusParams } from '../support/status-params.js';

/** Whether statuses go to this session: it negotiated `offline` without turning notifications off. */
export function wantsStatuses(session: SessionRecord): boolean {
  const offline = session.capabilities.offline;
  return offline !== undefined && offline.status_notifications !== false;
}

export interface StatusKeeping {
  /** The relay's own identity: kept statuses are queued as sent by it (no status about a status). */
  readonly relayId: string;
  /** How long a kept status waits for its sender (ms). */
  readonly ttlMs: number;
  /** The per-recipient queue cap: kept statuses may fill at most half of a sender's queue. */
  readonly maxQueued: number;
}

/** What the status notifier takes from the rooms below it, and the events it raises. */
export interface StatusDeps {
  readonly presence: Pick<Presence, 'endpoints' | 'isOnline'>;
  readonly queue: Pick<QueueStore, 'append' | 'stats'>;
  readonly forwarder: Pick<Forwarder, 'offer'>;
  readonly keeping: StatusKeeping;
  /** Where a status goes besides the connections here: back to a peer relay, another node, the sender's home relay. */
  readonly events: Pick<RelayEvents, 'statusToPeer' | 'statusElsewhere' | 'statusToHome'>;
  readonly metrics: RelayMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

/**
 * `wmp.message.status` to a sender (core §5.3.1): to each connection where the sender is
 * registered on a session that negotiated `offline.status_notifications`. A terminal status
 * (`delivered`, `expired`, `dropped`) that no such connection takes is kept when the sender asked
 * for statuses (the queued message records it: `notify`, so this holds across restarts and
 * nodes): appended to the sender's own queue, so it arrives when the sender comes back (resume or
 * register) and is acknowledged like a message. `queued` is only sent live: the terminal status
 * follows it. Senders that never asked for statuses (group-only participants, say) get none kept.
 */
export class StatusNotifier {
  readonly #presence: StatusDeps['presence'];
  readonly #queue: StatusDeps['queue'];
  readonly #forwarder: StatusDeps['forwarder'];
  readonly #keeping: StatusKeeping;
  readonly #events: StatusDeps['events'];
  readonly #metrics: RelayMetrics;
  readonly #logger: Logger;
  readonly #now: () => number;

  constructor(deps: StatusDeps) {
    this.#presence = deps.presence;
    this.#queue = deps.queue;
    this.#forwarder = deps.forwarder;
    this.#keeping = deps.keeping;
    this.#events = deps.events;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#now = deps.now;
  }

  /**
   * Sends to the sender's live status connections; keeps a terminal status nobody took when
   * `keep` (the sender asked for statuses), and a `queued` one too with `keepQueued` (the sender
   * is live on another node of the cluster: its queue reaches it there). In a cluster, a sender
   * with no endpoint on this node gets it from the node where it is online, live, without a write
   * (docs/architecture.md, "Message statuses"); only when no node takes it is it kept.
   */
  send(sender: string, params: StatusParams, keep: boolean, keepQueued = false): void {
    if (sender === this.#keeping.relayId) return; // a kept status left the queue: nothing to report
    if (this.#events.statusToPeer(sender, params)) return;
    this.#metrics.status(params.status);
    // To a peer relay (it names the sender): through the peer's queue, so a link that dies with it
    // unread gets it again (the peer acknowledges it, and passes it on once); live only when the
    // peer's queue is full.
    if (params.sender !== undefined) {
      void this.#keepForPeer(sender, params);
      return;
    }
    if (this.#sendLive(sender, params) > 0) return;
    const keeps = keep && (params.status !== 'queued' || keepQueued);
    // Endpoints here that take no status now: this node is where the sender is (no one to ask).
    const asked = this.#presence.isOnline(sender)
      ? undefined
      : this.#events.statusElsewhere(sender, JSON.stringify({ params, keep }));
    if (asked === undefined) {
      if (keeps) void this.#keep(sender, params);
      return;
    }
    void asked.then((taken) => {
      if (taken === 0 && keeps) void this.#keep(sender, params);
    });
  }

  /**
   * A status another node of the cluster passed on (`RelayEvents.statusElsewhere`): sent live here, else kept, as
   * that node would have. Each node that took it may keep it: the kept copy's id is the status's
   * own (`keptStatusId`), so the sender's queue holds one.
   */
  noted(sender: string, note: string): void {
    const parsed = parseNote(note);
    if (parsed === undefined) return;
    if (this.#sendLive(sender, parsed.params) > 0) return;
    if (parsed.keep && parsed.params.status !== 'queued') void this.#keep(sender, parsed.params);
  }

  /** Sends to the sender's connections here that take statuses now; how many. */
  #sendLive(sender: string, params: StatusParams): number {
    const now = this.#now();
    let live = 0;
    for (const e of this.#presence.endpoints(sender)) {
      const session = e.hopSession;
      if (!e.statuses || session === undefined || e.registeredUntil <= now || !e.connection.sessions.has(session))
        continue;
      // An HTTP session without an open stream is not online: the status is kept instead.
      if (!reachable(e)) continue;
      live++;
      void e.connection.peer
        .notify(STATUS_METHOD, { wmp: metaFor(session), ...params }, session)
        .catch(() => undefined);
    }
    return live;
  }

  /**
   * The terminal status of messages (docs/architecture.md, "Message statuses": exactly one each):
   * `delivered` when one was first written to a live connection, or acknowledged without that;
   * `expired` when one left the queue never written to any connection. An entry already `delivered`
   * had its status: nothing more.
   */
  terminal(entries: readonly QueueRemoval[], status: 'delivered' | 'expired'): void {
    for (const r of entries) {
      // A notice (of a message awaiting consent) is no message: its sender hears of the message.
      if (r.delivered || isNoticeId(r.id)) continue;
      // A peer relay's outbox entry names the recipient and message itself (outbox-entry.ts); a
      // message held for a recipient, by its key.
      const { recipient, messageId } = isOutboxKey(r.recipient)
        ? parseOutboxEntryId(r.id)
        : { recipient: recipientOfHeldKey(r.recipient) ?? r.recipient, messageId: r.id };
      this.send(r.sender, { message_id: messageId, status, recipient }, r.notify);
    }
  }

  /**
   * Appends the status to the sender's queue, under half of its cap so kept statuses never
   * crowd out messages to it; past that, or on any store failure, the status is dropped.
   */
  async #keep(sender: string, params: StatusParams): Promise<void> {
    try {
      if (await this.#events.statusToHome(sender, params)) return;
      const { count } = await this.#queue.stats(sender);
      if (count >= Math.floor(this.#keeping.maxQueued / 2)) return;
      await this.#append(sender, params);
    } catch (e) {
      this.#logger.warn('relay.status_not_kept', { error: (e as { code?: string | number }).code ?? 'unknown' });
    }
  }

  /**
   * A status to a peer relay: its queue holds nothing but statuses, up to the store's caps; when
   * those are reached (the peer acknowledges slowly) or the store fails, it is sent live instead.
   */
  async #keepForPeer(relayId: string, params: StatusParams): Promise<void> {
    try {
      await this.#append(relayId, params);
    } catch (e) {
      this.#logger.warn('relay.status_not_kept', { error: (e as { code?: string | number }).code ?? 'unknown' });
      this.#sendLive(relayId, params);
    }
  }

  /**
   * Appends the status to `identity`'s queue and offers it to its live connections; `exists`:
   * another node (or an earlier try) kept it already.
   */
  async #append(identity: string, params: StatusParams): Promise<void> {
    const id = keptStatusId(params);
    const message: RoutedMessage = {
      jsonrpc: '2.0',
      method: STATUS_METHOD,
      params: { wmp: { version: '0.1', message_id: id }, ...params },
    };
    const body = JSON.stringify(message);
    const appended = await this.#queue.append(
      identity,
      { id, sender: this.#keeping.relayId, body },
      { expiresAt: this.#now() + this.#keeping.ttlMs },
    );
    if (appended.status === 'queued') this.#forwarder.offer(identity, appended.seq, message, body);
  }
}

/**
 * The id of a kept status: derived from what it reports (message, recipient, status, and the
 * sender for a peer relay), so that keeping one twice (two nodes, a retry) keeps it once.
 */
export function keptStatusId(params: StatusParams): string {
  const what = [params.message_id, params.recipient ?? '', params.status, params.sender ?? ''].join('\n');
  return `msg-${b64urlEncode(sha256(utf8(what)).subarray(0, 16))}`;
}

/** A note of `RelayEvents.statusElsewhere`, or undefined when it is none (it comes from our own nodes). */
function parseNote(note: string): { params: StatusParams; keep: boolean } | undefined {
  try {
    const { params, keep } = JSON.parse(note) as { params?: StatusParams; keep?: unknown };
    if (typeof params !== 'object' || params === null || typeof params.message_id !== 'string') return undefined;
    if (!STATUSES.has(params.status) || typeof keep !== 'boolean') return undefined;
    return { params, keep };
  } catch {
    return undefined;
  }
}
