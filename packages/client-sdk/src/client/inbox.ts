import type { WmpSession } from '@wmp/session';
import { AckBatcher } from './acks.js';
import { noticeOf } from './consignment.js';
import type { Emitter, Listener } from './emitter.js';
import { InboxQueue, type Incoming } from './inbox-queue.js';
import { isRecord, str } from './json-values.js';
import { checkEvidence } from './proofs/evidence-checks.js';
import type { MessageChecks } from './proofs/message-checks.js';
import { queueIdOf, receivedMessage, statusOf } from './received.js';
import type { SeenIds } from './seen-ids.js';
import type { ClientEvents, MessageStatusEvent } from './types.js';

/** Sender-chosen ids longer than this are not remembered (they would bloat the stored dedupe set). */
const MAX_CLIENT_MESSAGE_ID = 128;

/** The dedupe key of a sender's own message id, if it is short enough to keep. */
function clientKey(from: string | undefined, clientMessageId: string | undefined): string | undefined {
  if (from === undefined || clientMessageId === undefined || clientMessageId.length > MAX_CLIENT_MESSAGE_ID) {
    return undefined;
  }
  return `c:${from} ${clientMessageId}`;
}

export interface InboxOptions {
  readonly events: Emitter<ClientEvents>;
  readonly seen: SeenIds;
  readonly maxPendingMessages: number;
  /** The checks of signatures, relay chains and timestamp tokens. */
  readonly checks: MessageChecks;
  /** The relay this client proved, if it did (the last hop of a relay chain must be it). */
  readonly relayId: () => string | undefined;
  /** The newest message id handed over before (from the store). */
  readonly lastReceivedId: string | undefined;
  /** A live status (not one the relay kept), after the `status` listeners had it. */
  readonly onStatus: (status: MessageStatusEvent) => void;
  /** A relay message was handed over: `lastReceivedId` moved. */
  readonly onReceived: () => void;
  readonly report: (error: unknown) => void;
}

/**
 * What arrives for the application: every message handed over once (deduplicated by the relay's
 * id and by the sender's `client_message_id`, the ids kept in the store), in order, only while
 * someone listens, and acknowledged after its listeners are done. Statuses the relay kept for us
 * are handled the same way; live ones go out at once.
 */
export class Inbox {
  readonly #events: Emitter<ClientEvents>;
  readonly #seen: SeenIds;
  readonly #acks = new AckBatcher();
  readonly #messages: InboxQueue;
  /** Statuses the relay kept for us while we were away: they wait for a `status` listener. */
  readonly #keptStatuses: InboxQueue;
  /** Notices of consented messages (core §3.5): they wait for a `notice` listener. */
  readonly #notices: InboxQueue;
  /** Evidence notifications: they wait for an `evidence` listener. */
  readonly #evidence: InboxQueue;
  readonly #onStatus: InboxOptions['onStatus'];
  readonly #onReceived: InboxOptions['onReceived'];
  readonly #report: InboxOptions['report'];
  readonly #checks: MessageChecks;
  readonly #relayId: () => string | undefined;
  #lastReceivedId: string | undefined;

  constructor(options: InboxOptions) {
    this.#events = options.events;
    this.#seen = options.seen;
    this.#lastReceivedId = options.lastReceivedId;
    this.#onStatus = options.onStatus;
    this.#onReceived = options.onReceived;
    this.#report = options.report;
    this.#checks = options.checks;
    this.#relayId = options.relayId;
    this.#messages = new InboxQueue(options.maxPendingMessages, (m) => this.#take(m));
    this.#keptStatuses = new InboxQueue(options.maxPendingMessages, (m) => this.#takeStatus(m));
    this.#notices = new InboxQueue(options.maxPendingMessages, (m) => this.#takeNotice(m));
    this.#evidence = new InboxQueue(options.maxPendingMessages, (m) => this.#takeEvidence(m));
  }

  /** The newest relay message id handed to the application. */
  get lastReceivedId(): string | undefined {
    return this.#lastReceivedId;
  }

  /** `WmpClient.on`: messages and kept statuses wait while nobody listens for them. */
  listen<K extends keyof ClientEvents>(event: K, listener: Listener<ClientEvents[K]>): () => void {
    const off = this.#events.on(event, listener);
    const queue = this.#queueOf(event);
    queue?.setPaused(false);
    return () => {
      off();
      if (queue && this.#events.count(event) === 0) queue.setPaused(true);
    };
  }

  #queueOf(event: keyof ClientEvents): InboxQueue | undefined {
    if (event === 'message') return this.#messages;
    if (event === 'status') return this.#keptStatuses;
    if (event === 'notice') return this.#notices;
    return event === 'evidence' ? this.#evidence : undefined;
  }

  /** A `wmp.message.notice` from the client's queue (it has a `wmp.message_id` of its own). */
  notice(session: WmpSession, params: Record<string, unknown>): void {
    void this.#notices.push({ session, group: undefined, params, id: queueIdOf(params) });
  }

  /** A `wmp.evidence.notify` on `session`: queued (by its `wmp.message_id`, the record's queue id) for the `evidence` listeners. */
  evidence(session: WmpSession, params: Record<string, unknown>): void {
    const id = queueIdOf(params);
    if (id !== undefined) void this.#evidence.push({ session, group: undefined, params, id });
  }

  /** A `wmp.message.deliver` the relay routed to `session`. */
  message(session: WmpSession, group: string | undefined, params: Record<string, unknown>): void {
    void this.#messages.push({ session, group, params, id: queueIdOf(params) });
  }

  /** Content a group's layer read another way (`GroupSession.receive`); false when left out. */
  receive(session: WmpSession, group: string, params: Record<string, unknown>): boolean {
    return this.#messages.push({ session, group, params });
  }

  /**
   * A `wmp.message.status`. One the relay kept for us while we were away comes from our queue
   * with its own `wmp.message_id`: it is deduplicated and acknowledged like a message.
   */
  status(session: WmpSession, params: Record<string, unknown>): void {
    const id = queueIdOf(params);
    if (id !== undefined) {
      void this.#keptStatuses.push({ session, group: undefined, params, id });
      return;
    }
    const status = statusOf(params);
    if (status === undefined) return;
    this.#events.emit('status', status);
    this.#onStatus(status);
  }

  /** `WmpClient.receiveMail`: a message that came another way, unless it was seen already. */
  async receiveMail(mail: { readonly envelope: unknown; readonly from: string }): Promise<boolean> {
    const params = isRecord(mail.envelope) && isRecord(mail.envelope.params) ? mail.envelope.params : undefined;
    if (params === undefined) return false;
    const wmp = isRecord(params.wmp) ? params.wmp : {};
    const key = clientKey(mail.from, str(wmp.client_message_id));
    if ((key !== undefined && this.#seen.has(key)) || this.#events.count('message') === 0) return false;
    // A mail came through no relay of ours: its signature and token are checked, its chain is whatever it says.
    const proofs = await this.#checks.check(params);
    await this.#events.emitAndWait(
      'message',
      receivedMessage(params, undefined, undefined, 'mailbox', mail.from, proofs),
    );
    if (key !== undefined) await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
    return true;
  }

  /** Nothing more is handed over; what waits stays unacknowledged at the relay. */
  close(): void {
    this.#messages.close();
    this.#keptStatuses.close();
    this.#notices.close();
    this.#evidence.close();
  }

  /** Sends the acknowledgements batched so far (the connection is still up), then no more. */
  sendAcks(): Promise<void> {
    return this.#acks.close();
  }

  /** Drops them (the connection is gone: the relay sends those messages again, the dedupe drops them). */
  dropAcks(): void {
    this.#acks.discard();
  }

  /** One received message: dedupe, hand to the application (awaited), remember, acknowledge. */
  async #take(m: Incoming): Promise<void> {
    const wmp = isRecord(m.params.wmp) ? m.params.wmp : {};
    const id = str(wmp.message_id);
    const from = str(wmp.sender);
    const keys: string[] = [];
    if (id !== undefined) keys.push(`m:${id}`);
    const key = clientKey(from, str(wmp.client_message_id));
    if (key !== undefined) keys.push(key);
    if (keys.some((k) => this.#seen.has(k))) {
      if (id !== undefined) this.#acks.add(m.session, id);
      return;
    }
    const proofs = await this.#checks.check(m.params, this.#relayId());
    await this.#events.emitAndWait('message', receivedMessage(m.params, m.session.id, m.group, 'relay', from, proofs));
    // Acknowledged at once (before the dedupe set is written), so a close() right after the
    // listener still sends it; the relay does not send an acknowledged message again.
    if (id !== undefined) {
      this.#lastReceivedId = id;
      this.#acks.add(m.session, id);
    }
    if (keys.length > 0) await this.#seen.add(keys).catch((e: unknown) => this.#report(e));
    if (id !== undefined) this.#onReceived();
  }

  /** A kept status: like a message, handed over once, then remembered, then acknowledged. */
  async #takeStatus(m: Incoming): Promise<void> {
    const key = `m:${m.id}`;
    if (!this.#seen.has(key)) {
      const status = statusOf(m.params);
      if (status !== undefined) await this.#events.emitAndWait('status', status);
      await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
    }
    this.#acks.add(m.session, m.id!);
  }

  /** A notice: handed over once (the relay sends it again until acknowledged), then acknowledged. */
  async #takeNotice(m: Incoming): Promise<void> {
    const key = m.id === undefined ? undefined : `m:${m.id}`;
    const seen = key !== undefined && this.#seen.has(key);
    if (!seen) {
      const notice = noticeOf(m.params);
      if (notice !== undefined) await this.#events.emitAndWait('notice', notice);
    }
    // Acknowledged before the dedupe set is written, so a close() right after the listener still sends it.
    if (m.id !== undefined) this.#acks.add(m.session, m.id);
    if (!seen && key !== undefined) await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
  }

  /**
   * An evidence notification: checked (the record's JWS and token), handed over once per queue
   * id, remembered, then acknowledged with `wmp.evidence.ack` (the relay removes it from our
   * queue; the record stays in its repository).
   */
  async #takeEvidence(m: Incoming): Promise<void> {
    const key = `e:${m.id}`;
    if (!this.#seen.has(key)) {
      const { evidence, signed_evidence, timestamp_token } = m.params;
      const received = await checkEvidence({ evidence, signed_evidence, timestamp_token }, this.#checks);
      await this.#events.emitAndWait('evidence', received);
      await this.#seen.add([key]).catch((e: unknown) => this.#report(e));
    }
    // Lost with a dropped connection: the relay sends it again, and the dedupe acknowledges it anew.
    await m.session.notify('wmp.evidence.ack', { evidence_ids: [m.id!], status: 'stored' }).catch(() => undefined);
  }
}
