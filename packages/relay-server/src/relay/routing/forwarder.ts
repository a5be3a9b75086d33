import { chainUnderEvidence } from '@wmp/jcs-signing';
import type { QueueRemoval, QueueStore } from '../../storage/contracts/queue-store.js';
import type { Presence } from '../presence/presence.js';
import { isAssuranceLevel, meetsAssurance } from '../support/assurance.js';
import { type Endpoint, reachable } from '../support/endpoint.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { OpsLog } from '../support/ops-events.js';
import type { RelayEvents } from '../support/relay-events.js';
import { forwardFrame } from './forward-frame.js';
import { consignmentEvent } from './handover.js';
import { EVIDENCE_METHOD, type RoutedMessage, STATUS_METHOD } from './routed-message.js';

const DELIVER_METHOD = 'wmp.message.deliver';

/** Messages read per queue page while an endpoint catches up. */
const PAGE = 100;

/** Where a message goes out at one endpoint: on which session, with which params. */
interface Target {
  readonly session: string;
  readonly params: RoutedMessage['params'];
  /** The same frame written from the stored text, when the caller had it (`forwardFrame`). */
  readonly text?: string | undefined;
}

/** What the forwarder reads, and what it tells: commits (the other nodes), first writes (the senders). */
export interface ForwarderDeps {
  readonly queue: Pick<QueueStore, 'after' | 'markDelivered'>;
  readonly presence: Pick<Presence, 'endpoints' | 'isOnline'>;
  readonly events: Pick<RelayEvents, 'committed' | 'watching' | 'delivered' | 'handoverRefused'>;
  readonly metrics: RelayMetrics;
  readonly ops: OpsLog;
  readonly logger: Logger;
  readonly now: () => number;
  /**
   * How long a message written to a live connection waits for its `delivered` mark (decision
   * 0730): an acknowledgement within it removes the message and says `delivered` itself, so the
   * mark (a row rewritten, a write of the group commit) is not made at all.
   */
  readonly markDelayMs: number;
}

/**
 * Hands queued messages to live endpoints, in seq order, from the queue (docs/architecture.md,
 * "Delivering a message": forwarding is from the durable queue, so what a connection gets is what
 * was committed). Each endpoint has a cursor; a message that arrives while the endpoint is caught
 * up is sent at once without a read, otherwise one pump per endpoint reads the queue after its
 * cursor.
 */
export class Forwarder {
  readonly #queue: ForwarderDeps['queue'];
  readonly #presence: ForwarderDeps['presence'];
  readonly #events: ForwarderDeps['events'];
  readonly #metrics: RelayMetrics;
  readonly #ops: OpsLog;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #markDelayMs: number;
  /** Seqs written to a live connection, per recipient, marked delivered together (`markDelayMs`). */
  #written = new Map<string, Set<number>>();
  /** The flush of `#written` scheduled: on the next turn (`soon`, a message under evidence) or after the delay. */
  #marking: { readonly soon: boolean; readonly cancel: () => void } | undefined;
  /** The flushes begun so far, settled (their failures are logged, never thrown). */
  #flushed: Promise<void> = Promise.resolve();

  constructor(deps: ForwarderDeps) {
    this.#queue = deps.queue;
    this.#presence = deps.presence;
    this.#events = deps.events;
    this.#metrics = deps.metrics;
    this.#ops = deps.ops;
    this.#logger = deps.logger;
    this.#now = deps.now;
    this.#markDelayMs = deps.markDelayMs;
  }

  /**
   * `message` was committed for `identity` at `seq`: forward it to every endpoint of the
   * identity here that takes it, and tell the other nodes. Returns how many endpoints here take
   * it (0: the recipient is offline, or online on another node only).
   */
  offer(identity: string, seq: number, message: RoutedMessage, body?: string): number {
    const live = this.#offerHere(identity, seq, message, body);
    void this.#events.committed(identity, seq, body);
    return live;
  }

  /**
   * `offer` of a message just routed: resolves true when the recipient is online nowhere (no
   * endpoint here takes it and the wake-up reached no other node), which is when its sender hears
   * `queued` (docs/architecture.md, "Message statuses"). Costs a wake-up's round trip only when no endpoint here takes it. The
   * wake-up carries `body` (the message's stored text), so that a caught-up endpoint on another
   * node needs no read.
   */
  async offerRouted(identity: string, seq: number, message: RoutedMessage, body?: string): Promise<boolean> {
    const live = this.#offerHere(identity, seq, message, body);
    const woken = this.#events.committed(identity, seq, body);
    if (live > 0) return false;
    // This node's own subscription (endpoints here that take nothing now) is no other node.
    const here = this.#presence.isOnline(identity) ? 1 : 0;
    return (await woken) - here <= 0;
  }

  /** `body`, when given, is `JSON.stringify(message)`: the frames are written from it. */
  #offerHere(identity: string, seq: number, message: RoutedMessage, body: string | undefined): number {
    let live = 0;
    for (const endpoint of this.#presence.endpoints(identity)) {
      // Not reachable now (an HTTP session without a stream): it is not online; the queue keeps
      // the message and a pump sends it when the connection is reachable again.
      if (!reachable(endpoint)) continue;
      const target = this.#target(endpoint, message, undefined, body);
      if (target !== undefined) live++;
      if (endpoint.held || endpoint.running || endpoint.cursor !== seq - 1) {
        void this.pump(endpoint);
        continue;
      }
      // Caught up: this is the next message for this endpoint, no need to read it back.
      endpoint.cursor = seq;
      if (target !== undefined) void this.#send(endpoint, target, message, seq);
    }
    return live;
  }

  /**
   * Another node committed `body` for `identity` at `seq` and its wake-up carried it: an endpoint
   * here whose cursor is just before `seq` takes it as if read from the queue (the same bytes,
   * in seq order, so nothing is skipped or sent twice); any other that has not seen `seq` reads
   * its queue, as for a wake-up without a body.
   */
  offerWoken(identity: string, seq: number, body: string): void {
    let message: RoutedMessage | undefined;
    for (const endpoint of this.#presence.endpoints(identity)) {
      if (!endpoint.running && endpoint.cursor >= seq) continue;
      if (endpoint.held || endpoint.running || endpoint.cursor !== seq - 1 || !reachable(endpoint)) {
        void this.pump(endpoint);
        continue;
      }
      message ??= parseStored(body);
      if (message === undefined) {
        void this.pump(endpoint);
        continue;
      }
      endpoint.cursor = seq;
      const target = this.#target(endpoint, message, seq);
      if (target !== undefined) void this.#send(endpoint, target, message, seq);
    }
  }

  /**
   * A participant joined group `sessionId` on this endpoint's connection: the next pump reads the
   * queue from the start again and sends, of what the endpoint had passed over, the messages of
   * that group, in order and ahead of anything newer (docs/architecture.md, "Group sessions": a
   * joiner gets the group's backlog at once). The caller pumps.
   */
  rewind(endpoint: Endpoint, sessionId: string): void {
    const until = Math.max(endpoint.cursor, endpoint.replay?.until ?? 0);
    if (until === 0) return; // nothing passed over yet: the next pump reads everything anyway
    const sessions = endpoint.replay?.sessions ?? new Set<string>();
    sessions.add(sessionId);
    endpoint.replay = { until, sessions, restart: true };
    // A pump that is reading now goes back to the start after its current message.
    if (endpoint.running) endpoint.again = true;
    else endpoint.cursor = 0;
  }

  /**
   * A resume is being answered on this endpoint's connection: nothing goes out on it until
   * `release` (decision 0734). Before its answer the client still sends on the connection it
   * left, so an acknowledgement of what came here first would be lost, and the cursor has passed it.
   */
  hold(endpoint: Endpoint): void {
    endpoint.held = true;
  }

  /** The resume was answered: what waits goes out, in order. */
  release(endpoint: Endpoint): void {
    endpoint.held = false;
    void this.pump(endpoint);
  }

  /** Reads the endpoint's queue after its cursor and forwards what is for it; one pump at a time. */
  async pump(endpoint: Endpoint): Promise<void> {
    if (endpoint.held) return; // `release` pumps
    if (endpoint.running) {
      endpoint.again = true;
      return;
    }
    endpoint.running = true;
    try {
      // Wake-ups first, then the backlog: nothing committed in between is missed
      // (docs/architecture.md, "Cluster wake-ups").
      const watched = this.#events.watching(endpoint.identity);
      if (watched !== undefined) await watched;
      do {
        endpoint.again = false;
        let more = true;
        while (more && !endpoint.held && !endpoint.connection.peer.closed && reachable(endpoint)) {
          if (endpoint.replay?.restart) {
            endpoint.replay.restart = false;
            endpoint.cursor = 0;
          }
          const page = await this.#queue.after(endpoint.identity, endpoint.cursor, PAGE, this.#now());
          more = page.more;
          for (const queued of page.messages) {
            if (endpoint.replay?.restart) {
              more = true;
              break;
            }
            if (endpoint.held || !reachable(endpoint)) {
              more = false;
              break;
            }
            endpoint.cursor = queued.seq;
            const message = JSON.parse(queued.body) as RoutedMessage;
            const target = this.#target(endpoint, message, queued.seq);
            if (target !== undefined) await this.#send(endpoint, target, message, queued.seq);
          }
        }
        if (endpoint.replay && endpoint.cursor >= endpoint.replay.until) endpoint.replay = undefined;
      } while (endpoint.again && !endpoint.connection.peer.closed);
    } catch (e) {
      this.#logger.warn('relay.forward_failed', { error: (e as { code?: string }).code ?? 'unknown' });
    } finally {
      endpoint.running = false;
    }
  }

  /**
   * Where a message goes out at this endpoint, or undefined when it is not for it: a group message
   * on its group session when the connection is bound to it as the recipient, else (a listed
   * participant who never joined, docs/architecture.md, "Group sessions") on the session the recipient registered on this
   * connection, still naming its group session; a hop message on that registered session, while
   * it holds; a kept status there too, when that session takes statuses, and an evidence
   * notification when it negotiated evidence. While a join replays the
   * queue, only the joined groups' messages go out of the part read before.
   */
  #target(endpoint: Endpoint, message: RoutedMessage, seq?: number, body?: string): Target | undefined {
    const group = message.params.wmp.session_id;
    const replay = endpoint.replay;
    if (replay && seq !== undefined && seq <= replay.until && (group === undefined || !replay.sessions.has(group))) {
      return undefined;
    }
    const sessions = endpoint.connection.sessions;
    if (group !== undefined && sessions.get(group)?.identity === endpoint.identity) {
      return this.#assured(endpoint, message) ? targetAt(group, message.params, frameOf(body, message)) : undefined;
    }
    const hop = endpoint.hopSession;
    if (hop === undefined || endpoint.registeredUntil <= this.#now() || !sessions.has(hop)) return undefined;
    if (!this.#assured(endpoint, message)) return undefined;
    if (group !== undefined) return targetAt(hop, message.params, frameOf(body, message));
    if (message.method === STATUS_METHOD && !endpoint.statuses) return undefined;
    if (message.method === EVIDENCE_METHOD && !endpoint.evidence) return undefined;
    // The copy stays: a binding that sends no text (an HTTP session) writes the frame from it.
    const params = { ...message.params, wmp: { ...message.params.wmp, session_id: hop } };
    return targetAt(hop, params, frameOf(body, message, hop));
  }

  /**
   * Whether this connection may be handed `message`'s content (core §3.5.1): it authenticated at
   * or above the `recipient_assurance_level` the sender asked for. If not, never; and the delivery
   * fails (`handoverRefused`).
   */
  #assured(endpoint: Endpoint, message: RoutedMessage): boolean {
    const wanted = message.params.recipient_assurance_level;
    if (wanted === undefined || message.method !== DELIVER_METHOD) return true;
    if (isAssuranceLevel(wanted) && meetsAssurance(endpoint.assurance, wanted)) return true;
    const failed = consignmentEvent('delivery_failed', message, endpoint.identity, this.#now(), {
      reason: 'insufficient_assurance',
      ...(endpoint.delegate ? { recipientDelegate: endpoint.delegate } : {}),
    });
    this.#events.handoverRefused(endpoint.identity, failed);
    return false;
  }

  async #send(endpoint: Endpoint, target: Target, message: RoutedMessage, seq: number): Promise<void> {
    this.#metrics.deliveries++;
    try {
      await endpoint.connection.peer.notify(message.method, target.params, target.session, target.text);
    } catch {
      // A connection that went away keeps the message in the queue: it is replayed on resume.
      return;
    }
    // A kept status or evidence notification is no message: it has no `delivered` of its own.
    if (message.method === STATUS_METHOD || message.method === EVIDENCE_METHOD) return;
    this.#markWritten(endpoint.identity, seq, chainUnderEvidence(message.params.wmp.relay_chain));
    this.#ops.event('message.delivered', { on: target.session === endpoint.hopSession ? 'hop' : 'session' });
  }

  /**
   * Written to a live connection: `delivered` (docs/architecture.md, "Message statuses"), recorded
   * in the queue so that it is sent once whatever connection (or, in a cluster, node) wrote it.
   * Marks go together, `markDelayMs` later: an acknowledgement that comes first removes the
   * message and says `delivered` instead, and the mark finds nothing to mark. A message under
   * evidence is marked on the next turn, so that its handover is recorded before its
   * acknowledgement, as when it was written.
   */
  #markWritten(identity: string, seq: number, soon: boolean): void {
    const seqs = this.#written.get(identity);
    if (seqs) seqs.add(seq);
    else this.#written.set(identity, new Set([seq]));
    if (this.#marking !== undefined && (this.#marking.soon || !soon)) return;
    this.#marking?.cancel();
    if (soon) {
      const immediate = setImmediate(() => void this.flushMarks());
      this.#marking = { soon, cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => void this.flushMarks(), this.#markDelayMs);
      timer.unref();
      this.#marking = { soon, cancel: () => clearTimeout(timer) };
    }
  }

  /** Messages acknowledged (and so removed): nothing is left to mark of them. */
  acknowledged(removed: readonly QueueRemoval[]): void {
    for (const r of removed) {
      const seqs = this.#written.get(r.recipient);
      if (seqs?.delete(r.seq) && seqs.size === 0) this.#written.delete(r.recipient);
    }
  }

  /**
   * Marks now what was written and not marked yet, and waits for it: before a count of what an
   * identity missed (a resume), and when the relay stops (its store closes next).
   */
  async flushMarks(): Promise<void> {
    this.#marking?.cancel();
    this.#marking = undefined;
    if (this.#written.size > 0) {
      const written = this.#written;
      this.#written = new Map();
      // Waits for the flushes begun before this one too: what was written before is marked.
      this.#flushed = Promise.all([this.#flushed, this.#mark(written)]).then(() => undefined);
    }
    await this.#flushed;
  }

  async #mark(written: ReadonlyMap<string, ReadonlySet<number>>): Promise<void> {
    await Promise.all(
      [...written].map(async ([identity, set]) => {
        const seqs = [...set];
        try {
          for (let i = 0; i < seqs.length; i += 500) {
            const marked = await this.#queue.markDelivered(identity, seqs.slice(i, i + 500));
            if (marked.length > 0) this.#events.delivered(marked);
          }
        } catch (e) {
          this.#logger.warn('relay.mark_delivered_failed', { error: (e as { code?: string }).code ?? 'unknown' });
        }
      }),
    );
  }
}

function targetAt(session: string, params: RoutedMessage['params'], text: string | undefined): Target {
  return { session, params, text };
}

function frameOf(body: string | undefined, message: RoutedMessage, session?: string): string | undefined {
  return body === undefined ? undefined : forwardFrame(body, message, session);
}

/** A stored message's text as the queue holds it, or undefined when it is not one (the queue is read instead). */
function parseStored(body: string): RoutedMessage | undefined {
  try {
    const message = JSON.parse(body) as RoutedMessage;
    return typeof message?.method === 'string' && typeof message.params?.wmp === 'object' ? message : undefined;
  } catch {
    return undefined;
  }
}
