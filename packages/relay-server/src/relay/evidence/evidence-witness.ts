import { contentHash } from '@wmp/jcs-signing';
import {
  type EvidenceEventType,
  EvidenceRequiredError,
  type JsonRpcNotification,
  WmpError,
} from '@wmp/jsonrpc-envelope';
import type { SessionRecord } from '@wmp/session';
import type { EvidenceCase, EvidenceStore } from '../../storage/contracts/evidence-store.js';
import type { QueueRemoval } from '../../storage/contracts/queue-store.js';
import type { RoutedMessage } from '../routing/routed-message.js';
import type { Logger } from '../support/logger.js';
import type { RelayMetrics } from '../support/metrics.js';
import type { RefusalLog } from '../support/refusals.js';
import type { EvidenceIssuer, IssuedEvidence } from './evidence-issuer.js';
import type { EvidenceNotifier } from './evidence-notifier.js';
import { evidenceTypesOf } from './evidence-policy.js';
import {
  newEvidenceId,
  type RecordInput,
  type RecordSubject,
  reasonOfDrop,
  reasonOfRefusal,
} from './evidence-records.js';

/** Messages that were written to a live connection, acknowledged, or swept unacknowledged. */
export interface QueueEvent {
  readonly kind: 'written' | 'acknowledged' | 'expired';
  readonly entries: readonly QueueRemoval[];
}

/** What one witnessed event is about: a message under evidence at this relay, and maybe one recipient. */
export interface EvidenceAbout {
  readonly messageId: string;
  /** The original sender. */
  readonly sender: string;
  readonly recipient?: string | undefined;
}

/** What else a record says: why (a refusal's reason), details, and when (default now). */
export interface EvidenceExtra {
  readonly reason?: RecordInput['reason'];
  readonly details?: Readonly<Record<string, unknown>>;
  readonly at?: number;
}

/**
 * What other parts of the relay (the consignment and acceptance steps among them) call to record
 * an event they witness for a message under evidence: the record is made, signed by the relay
 * (timestamped when a TSA is configured), kept in the repository and sent to the original sender
 * as `wmp.evidence.notify`. Resolves with the record's id, or undefined when the message is under
 * no evidence here (no case open), its sender's session did not negotiate that event type, or
 * the record could not be kept (logged; recording never fails the caller).
 */
export interface EvidenceRecorder {
  record(type: EvidenceEventType, about: EvidenceAbout, extra?: EvidenceExtra): Promise<string | undefined>;
}

export interface EvidenceWitnessDeps {
  readonly store: EvidenceStore;
  readonly issuer: EvidenceIssuer;
  readonly notifier: EvidenceNotifier;
  /** The relay's public origin: the records' `evidence_issuer.name`. */
  readonly origin: () => string;
  /** How long after a message's expiry its case stays open (a peer's records may still come). */
  readonly caseGraceMs: number;
  readonly metrics: RelayMetrics;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A message taken under evidence: from the sender's session here, or from a peer relay. */
export interface TakenMessage {
  readonly message: RoutedMessage | JsonRpcNotification;
  readonly messageId: string;
  readonly sender: string;
  readonly recipients: readonly string[];
  /** When it leaves the queues (ms). */
  readonly expiresAt: number;
}

/** Where a message under evidence came from: the sender's session here, or the peer relay that forwarded it. */
export type TakenFrom = { readonly session: SessionRecord } | { readonly peer: string };

/**
 * The case of a message being stored: opened before the message is, so that no record of its
 * delivery can come before the case; settled once with what happened to the submission.
 */
export interface OpenedCase {
  /** Stored for its recipients: `submission_accepted` (`relay_accepted` from a peer). */
  accepted(): Promise<void>;
  /** Refused after all (no queue took it, a limit): `submission_rejected` (`relay_rejected`). */
  rejected(reason: NonNullable<RecordInput['reason']>): Promise<void>;
  /** Not stored, for now (the store is down, a rate): no record; a retry of it opens the same case. */
  abandoned(): void;
}

/** The most recipients one record names as parties (a fan-out is bounded anyway). */
const MAX_PARTIES = 256;

/**
 * The relay's evidence recorder (wmp-tables §9): turns what it witnesses into records. A message
 * under evidence opens a case before it is stored; its first record says whether it was taken
 * (`submission_accepted` / `_rejected`, `relay_accepted` / `_rejected` for one a peer forwarded);
 * its delivery, acknowledgement, expiry and refusals (the queue marks it) add records to the
 * case, in order on this node; each record goes to the original sender, or back to the peer the
 * message came through.
 */
export class EvidenceWitness implements EvidenceRecorder {
  readonly #d: EvidenceWitnessDeps;
  /** Cases whose first record is being made here: their other records wait for it. */
  readonly #opening = new Map<string, Promise<void>>();

  constructor(deps: EvidenceWitnessDeps) {
    this.#d = deps;
  }

  /** -31009 (`repository_full`) before a message under evidence is taken, when no record could be kept. */
  async checkRoom(): Promise<void> {
    const { store } = this.#d;
    if ((await store.totals()).count >= store.limits.maxRecords) {
      this.#d.refusals.note('evidence_full');
      throw new EvidenceRequiredError({ reason: 'repository_full' });
    }
  }

  /**
   * Opens the case of a message about to be stored for its recipients; undefined when its first
   * record was made already (a retry of a message the sender or a peer named: its records were
   * made the first time). A case opened for an attempt that was abandoned is taken up again.
   */
  async open(taken: TakenMessage, from: TakenFrom): Promise<OpenedCase | undefined> {
    const now = this.#d.now();
    const mode = (taken.message.params as Record<string, unknown>).consignment_mode;
    const session = 'session' in from ? from.session : undefined;
    const c: EvidenceCase = {
      messageId: taken.messageId,
      sender: taken.sender,
      recipients: taken.recipients.slice(0, MAX_PARTIES),
      sessionId: session?.id,
      contentHash: contentHash(taken.message),
      submittedAt: now,
      firstEvidenceId: newEvidenceId(),
      eventTypes: session === undefined ? [] : [...(evidenceTypesOf(session) ?? [])],
      via: 'peer' in from ? from.peer : undefined,
      consignment: typeof mode === 'string' && mode !== 'basic' ? mode : undefined,
      expiresAt: taken.expiresAt + this.#d.caseGraceMs,
    };
    const held = (await this.#d.store.open(c)) === 'exists' ? await this.#d.store.caseOf(c.messageId, c.sender) : c;
    if (held === undefined || (held !== c && (await this.#d.store.get(held.firstEvidenceId)) !== undefined)) {
      return undefined;
    }
    const key = caseKey(held.messageId, held.sender);
    let settle!: () => void;
    this.#opening.set(key, new Promise<void>((resolve) => (settle = resolve)));
    const done = () => {
      this.#opening.delete(key);
      settle();
    };
    const first = async (type: EvidenceEventType, reason?: RecordInput['reason']) => {
      try {
        await this.#first(held, type, taken, reason);
      } catch (e) {
        this.#failed(e);
      } finally {
        done();
      }
    };
    const fromPeer = held.via !== undefined;
    return {
      accepted: () => first(fromPeer ? 'relay_accepted' : 'submission_accepted'),
      rejected: (reason) => first(fromPeer ? 'relay_rejected' : 'submission_rejected', reason),
      abandoned: done,
    };
  }

  /** A deliver from `session` was refused before it was stored: `submission_rejected`, with no case. */
  async refused(
    session: SessionRecord,
    sender: string,
    message: JsonRpcNotification,
    messageId: string,
    reason: NonNullable<RecordInput['reason']>,
  ): Promise<void> {
    const types = evidenceTypesOf(session) ?? [];
    if (!types.includes('submission_rejected')) return;
    try {
      const now = this.#d.now();
      const subject: RecordSubject = {
        messageId,
        sender,
        contentHash: contentHash(message),
        submittedAt: now,
        sessionId: session.id,
        senderDelegate: delegateOf(message),
      };
      const issued = await this.#d.issuer.issue(
        { id: newEvidenceId(), type: 'submission_rejected', subject, at: now, issuer: this.#issuer(), reason },
        [sender],
      );
      if ((await this.#d.store.add(issued.entry)) !== 'stored') return;
      this.#d.metrics.evidenceRecord('submission_rejected');
      await this.#d.notifier.send(sender, await this.#d.issuer.notifyOf(issued.entry.id, issued.served), false);
    } catch (e) {
      this.#failed(e);
    }
  }

  async record(type: EvidenceEventType, about: EvidenceAbout, extra: EvidenceExtra = {}): Promise<string | undefined> {
    try {
      const c = await this.#caseOf(about.messageId, about.sender);
      if (c === undefined) return undefined;
      return await this.#add(c, type, about.recipient, extra);
    } catch (e) {
      this.#failed(e);
      return undefined;
    }
  }

  /** Messages left a queue or were written to a connection: what that means for those under evidence. */
  queueEvent(event: QueueEvent): void {
    const marked = event.entries.filter((r) => r.evidence);
    if (marked.length === 0) return;
    void this.#queueEvent(event.kind, marked);
  }

  /** A message under evidence could not be delivered to `recipient` (`dropped`): `delivery_failed`. */
  dropped(sender: string, messageId: string, recipient: string, reason: string | undefined): void {
    void this.record('delivery_failed', { messageId, sender, recipient }, { reason: reasonOfDrop(reason) });
  }

  /** Outbox entries under evidence are on the disk of the peer relay `next`: `relay_forwarded`. */
  forwarded(
    entries: readonly EvidenceAbout[],
    next: { readonly origin: string; readonly relayId: string | undefined },
  ): void {
    for (const about of entries) {
      void this.record('relay_forwarded', about, {
        details: { next_relay: next.origin, ...(next.relayId === undefined ? {} : { next_relay_id: next.relayId }) },
      });
    }
  }

  /** The case of a message, once its first record (if being made here) is made. */
  async #caseOf(messageId: string, sender: string): Promise<EvidenceCase | undefined> {
    await this.#opening.get(caseKey(messageId, sender));
    return this.#d.store.caseOf(messageId, sender);
  }

  async #queueEvent(kind: QueueEvent['kind'], removals: readonly QueueRemoval[]): Promise<void> {
    for (const r of removals) {
      try {
        const c = await this.#caseOf(r.id, r.sender);
        if (c === undefined) continue;
        if (kind === 'expired') {
          await this.#add(c, r.delivered ? 'retrieval_timeout' : 'delivery_expired', r.recipient);
          continue;
        }
        // Written to a live connection, or acknowledged before any write was marked: delivered now.
        if (kind === 'written' || !r.delivered) {
          await this.#add(c, 'delivery_confirmed', r.recipient);
          // A consented message's content is handed over on acceptance, by the consignment step.
          if (c.consignment === undefined) await this.#add(c, 'content_handover', r.recipient);
        }
        if (kind === 'acknowledged') await this.#add(c, 'retrieval_confirmed', r.recipient);
      } catch (e) {
        this.#failed(e);
      }
    }
  }

  /** The case's first record, under the id the case holds, kept and sent. */
  async #first(
    c: EvidenceCase,
    type: EvidenceEventType,
    taken: TakenMessage,
    reason: RecordInput['reason'] | undefined,
  ): Promise<void> {
    if (!wanted(c, type)) return;
    const issued = await this.#d.issuer.issue(
      {
        id: c.firstEvidenceId,
        type,
        subject: { ...subjectOf(c), senderDelegate: delegateOf(taken.message) },
        at: this.#d.now(),
        issuer: this.#issuer(),
        reason,
        ...(c.via === undefined ? {} : { details: { previous_relay_id: c.via } }),
      },
      [taken.sender, ...taken.recipients.slice(0, MAX_PARTIES)],
    );
    await this.#keep(c, issued);
  }

  /** One more record of an open case (when its type was negotiated), kept and sent. */
  async #add(
    c: EvidenceCase,
    type: EvidenceEventType,
    recipient: string | undefined,
    extra: EvidenceExtra = {},
  ): Promise<string | undefined> {
    if (!wanted(c, type)) return undefined;
    const issued = await this.#d.issuer.issue(
      {
        id: newEvidenceId(),
        type,
        subject: subjectOf(c),
        at: extra.at ?? this.#d.now(),
        issuer: this.#issuer(),
        recipient,
        previous: c.firstEvidenceId,
        reason: extra.reason,
        details: extra.details,
      },
      recipient === undefined ? [c.sender] : [c.sender, recipient],
    );
    return (await this.#keep(c, issued)) ? issued.entry.id : undefined;
  }

  /** Keeps a record of case `c` and sends it to the sender, or back to the peer the message came through. */
  async #keep(c: EvidenceCase, issued: IssuedEvidence): Promise<boolean> {
    const stored = await this.#d.store.add(issued.entry);
    if (stored === 'full') this.#d.refusals.note('evidence_full');
    if (stored !== 'stored') return false;
    this.#d.metrics.evidenceRecord(issued.entry.eventType);
    const notify = await this.#d.issuer.notifyOf(issued.entry.id, issued.served);
    await this.#d.notifier.send(c.via ?? c.sender, notify, c.via !== undefined);
    return true;
  }

  #issuer(): { id: string; name: string } {
    return { id: this.#d.issuer.relayId, name: this.#d.origin() };
  }

  #failed(e: unknown): void {
    this.#d.logger.warn('relay.evidence.failed', { error: (e as { code?: string | number }).code ?? 'unknown' });
  }
}

/** A case's key: message id and sender (two senders may choose the same message id). */
function caseKey(messageId: string, sender: string): string {
  return JSON.stringify([messageId, sender]);
}

/** Whether the case's sender asked for `type` (a case opened for a peer asks for every type). */
function wanted(c: EvidenceCase, type: string): boolean {
  return c.eventTypes.length === 0 || c.eventTypes.includes(type);
}

function subjectOf(c: EvidenceCase): RecordSubject {
  return {
    messageId: c.messageId,
    sender: c.sender,
    contentHash: c.contentHash,
    submittedAt: c.submittedAt,
    sessionId: c.sessionId,
  };
}

/** The delegate a message names as having sent it (`wmp.sender_delegate.id`), if any. */
function delegateOf(message: { readonly params?: unknown }): string | undefined {
  const wmp = (message.params as { wmp?: { sender_delegate?: { id?: unknown } } } | undefined)?.wmp;
  const id = wmp?.sender_delegate?.id;
  return typeof id === 'string' ? id : undefined;
}

/** Answers that mean "later" (a rate, the store down, a failure of ours): the sender may send it again. */
const RETRIED: ReadonlySet<number> = new Set([-31007, -32603]);

/**
 * The case of a message refused after it was opened: its rejection recorded (with the refusal's
 * code and `data.reason`), or, for an answer that means "later", left for the retry.
 */
export async function settleRefused(opened: OpenedCase | undefined, e: unknown): Promise<void> {
  if (opened === undefined) return;
  if (!(e instanceof WmpError) || RETRIED.has(e.code)) {
    opened.abandoned();
    return;
  }
  const reason = (e.data as { reason?: unknown } | undefined)?.reason;
  await opened.rejected(reasonOfRefusal(e.code, typeof reason === 'string' ? reason : undefined));
}
