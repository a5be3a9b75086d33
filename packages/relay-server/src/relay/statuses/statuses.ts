import { b64urlEncode, sha256, utf8 } from '@wmp/jcs-signing';
import type { QueueRemoval, QueueStore } from '../../storage/contracts/queue-store.js';
import { isOutboxKey, parseOutboxEntryId } from '../routing/outbox-entry.js';
import type { Forwarder, RoutedMessage } from '../routing/forwarder.js';
import { reachable, STATUS_METHOD } from '../routing/forwarder.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { Presence } from '../presence/presence.js';
import { metaFor } from '../support/session-meta.js';

export type MessageStatus = 'queued' | 'delivered' | 'expired' | 'dropped';

const STATUSES: ReadonlySet<string> = new Set<MessageStatus>(['queued', 'delivered', 'expired', 'dropped']);

export interface StatusParams {
  readonly message_id: string;
  readonly status: MessageStatus;
  readonly recipient?: string;
  readonly queued_until?: string;
  readonly reason?: string;
  /** Why a `dropped` came about when a relay downstream refused the message: its error code and `data.reason`. */
  readonly data?: StatusDetail;
  /** The sender a status is about, when it goes back to the peer relay the sender came through. */
  readonly sender?: string;
}

/** A downstream refusal as a status carries it: a JSON-RPC code, and a `data.reason` token. */
export interface StatusDetail {
  readonly code: number;
  readonly reason?: string;
}

/** A `data.reason` fit to pass on: a short snake_case token (nothing a peer could smuggle through). */
const REASON_TOKEN = /^[a-z][a-z0-9_]{0,63}$/;

/** The detail of a refusal from its code and `data` (as a peer answered, or as a peer's status said). */
export function statusDetailOf(code: unknown, data: unknown): StatusDetail | undefined {
  if (!Number.isSafeInteger(code)) return undefined;
  const reason = (data as { reason?: unknown } | null | undefined)?.reason;
  return { code: code as number, ...(typeof reason === 'string' && REASON_TOKEN.test(reason) ? { reason } : {}) };
}

export interface StatusKeeping {
  /** The relay's own identity: kept statuses are queued as sent by it (no status about a status). */
  readonly relayId: string;
  /** How long a kept status waits for its sender (ms). */
  readonly ttlMs: number;
  /** The per-recipient queue cap: kept statuses may fill at most half of a sender's queue. */
  readonly maxQueued: number;
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
  readonly #presence: Presence;
  readonly #queue: QueueStore;
  readonly #forwarder: Forwarder;
  readonly #keeping: StatusKeeping;
  readonly #metrics: RelayMetrics;
  readonly #logger: Logger;
  readonly #now: () => number;
  /** A status for a sender reached through a peer relay goes back there: true when it took it. */
  onremote: ((sender: string, params: StatusParams) => boolean) | undefined;
  /**
   * A cluster: passes a status for a sender with no endpoint here to the nodes where it has one
   * (they call `noted`); resolves how many took it.
   */
  elsewhere: ((sender: string, note: string) => Promise<number>) | undefined;
  /** Before a status is kept: one for a sender at home at a peer relay goes there (true when it took it). */
  onhome: ((sender: string, params: StatusParams) => Promise<boolean>) | undefined;

  constructor(
    presence: Presence,
    queue: QueueStore,
    forwarder: Forwarder,
    keeping: StatusKeeping,
    metrics: RelayMetrics,
    logger: Logger,
    now: () => number,
  ) {
    this.#presence = presence;
    this.#queue = queue;
    this.#forwarder = forwarder;
    this.#keeping = keeping;
    this.#metrics = metrics;
    this.#logger = logger;
    this.#now = now;
  }

  /**
   * Sends to the sender's live status connections; keeps a terminal status nobody took when
   * `keep` (the sender asked for statuses), and a `queued` one too with `keepQueued` (the sender
   * is live on another node of the cluster: its queue reaches it there). In a cluster, a sender
   * with no endpoint on this node gets it from the node where it is online, live, without a write
   * (DESIGN §3 "Cluster"); only when no node takes it is it kept.
   */
  send(sender: string, params: StatusParams, keep: boolean, keepQueued = false): void {
    if (sender === this.#keeping.relayId) return; // a kept status left the queue: nothing to report
    if (this.onremote?.(sender, params) === true) return;
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
    if (this.elsewhere === undefined || this.#presence.isOnline(sender)) {
      if (keeps) void this.#keep(sender, params);
      return;
    }
    void this.elsewhere(sender, JSON.stringify({ params, keep })).then((taken) => {
      if (taken === 0 && keeps) void this.#keep(sender, params);
    });
  }

  /**
   * A status another node of the cluster passed on (`elsewhere`): sent live here, else kept, as
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
   * The terminal status of messages (DESIGN §3: exactly one each): `delivered` when one was first
   * written to a live connection, or acknowledged without that; `expired` when one left the queue
   * never written to any connection. An entry already `delivered` had its status: nothing more.
   */
  terminal(entries: readonly QueueRemoval[], status: 'delivered' | 'expired'): void {
    for (const r of entries) {
      if (r.delivered) continue;
      // A peer relay's outbox entry names the recipient and message itself (outbox-entry.ts).
      const { recipient, messageId } = isOutboxKey(r.recipient)
        ? parseOutboxEntryId(r.id)
        : { recipient: r.recipient, messageId: r.id };
      this.send(r.sender, { message_id: messageId, status, recipient }, r.notify);
    }
  }

  /**
   * Appends the status to the sender's queue, under half of its cap so kept statuses never
   * crowd out messages to it; past that, or on any store failure, the status is dropped.
   */
  async #keep(sender: string, params: StatusParams): Promise<void> {
    try {
      if ((await this.onhome?.(sender, params)) === true) return;
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
    const appended = await this.#queue.append(
      identity,
      { id, sender: this.#keeping.relayId, body: JSON.stringify(message) },
      { expiresAt: this.#now() + this.#keeping.ttlMs },
    );
    if (appended.status === 'queued') this.#forwarder.offer(identity, appended.seq, message);
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

/** A note of `StatusNotifier.elsewhere`, or undefined when it is none (it comes from our own nodes). */
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
