// Consignment at the recipient's relay (core §3.5, wmp-tables §3.2): how a message for a
// recipient here reaches its queue. `basic` goes into the queue (and out to its connections); a
// message with a `deliver_after` to come is held until due; a `consented` one is held while the
// recipient gets a notice (sender and metadata, never content), until it accepts or rejects.
import { contentHash } from '@wmp/jcs-signing';
import { rfc3339 } from '@wmp/jsonrpc-envelope';
import type { AppendResult, QueueStore } from '../../storage/contracts/queue-store.js';
import type { WitnessedEvent } from '../support/evidence-hooks.js';
import type { ConsignmentMode, ResolvedRegistered } from '../support/registered.js';
import type { ConsignmentPolicy } from './consignment-checks.js';
import { consentKey, newNoticeId, scheduledKey } from './held-keys.js';
import type { RoutedMessage } from './routed-message.js';

export const NOTICE_METHOD = 'wmp.message.notice';

/** What a message is as a queue entry: the same for the recipient's queue and the holding ones. */
export interface HandoverEntry {
  readonly id: string;
  /** Who hears its statuses (the one who sent it: a delegate, for a principal). */
  readonly sender: string;
  readonly notify: boolean;
  readonly expiresAt: number;
  readonly body: string;
  readonly bytes: number;
  /** Under evidence: what happens to it is recorded (kept with it while it is held). */
  readonly evidence?: boolean;
}

export interface HandoverDeps {
  readonly queue: Pick<QueueStore, 'append' | 'ack'>;
  readonly registered: ConsignmentPolicy & Pick<ResolvedRegistered, 'evidence'>;
  /** The relay's identity: a notice comes from it. */
  readonly relayId: string;
  now(): number;
}

export interface Handover {
  /** The content's append (`exists`: a retry of one already taken, here or where it is held). */
  readonly appended: AppendResult;
  /** The queue it went to: the recipient's, or one that holds it. */
  readonly key: string;
  /** What the recipient's queue got now, to offer its connections: the message or its notice; undefined while held. */
  readonly offer: { readonly seq: number; readonly message: RoutedMessage } | undefined;
}

/** The consignment mode a message is handed over in: its own, else the recipient's preference. */
export function consignmentModeOf(
  params: Readonly<Record<string, unknown>>,
  registered: Pick<ResolvedRegistered, 'recipientMetadata'>,
): ConsignmentMode {
  const mode = params.consignment_mode;
  return typeof mode === 'string' ? (mode as ConsignmentMode) : registered.recipientMetadata.consignmentPreference;
}

/** When `deliver_after` falls, if it is still to come (ms); undefined: now. */
export function dueAtOf(params: RoutedMessage['params'], now: number): number | undefined {
  const after = params.wmp.deliver_after;
  const at = typeof after === 'string' ? Date.parse(after) : Number.NaN;
  return Number.isFinite(at) && at > now ? at : undefined;
}

/**
 * Appends a message for `recipient` as its consignment asks; `scheduled: false` once it fell due
 * (the scheduler hands it over). The content and its notice are appended under the same caps as
 * any message (the holding queue's, then the recipient's).
 */
export async function handOver(
  s: HandoverDeps,
  recipient: string,
  message: RoutedMessage,
  entry: HandoverEntry,
  scheduled = true,
): Promise<Handover> {
  const now = s.now();
  const queued = {
    id: entry.id,
    sender: entry.sender,
    body: entry.body,
    notify: entry.notify,
    evidence: entry.evidence === true,
  };
  const dueAt = scheduled ? dueAtOf(message.params, now) : undefined;
  if (dueAt !== undefined) {
    const key = scheduledKey(recipient);
    const appended = await s.queue.append(key, queued, { expiresAt: entry.expiresAt, bytes: entry.bytes, dueAt });
    return { appended, key, offer: undefined };
  }
  const mode = consignmentModeOf(message.params, s.registered);
  if (mode === 'basic') {
    const appended = await s.queue.append(recipient, queued, { expiresAt: entry.expiresAt, bytes: entry.bytes });
    return {
      appended,
      key: recipient,
      offer: appended.status === 'queued' ? { seq: appended.seq, message } : undefined,
    };
  }
  const key = consentKey(recipient);
  const appended = await s.queue.append(key, queued, { expiresAt: entry.expiresAt, bytes: entry.bytes });
  // A retry of a message held already: its notice went with the first.
  if (appended.status === 'exists') return { appended, key, offer: undefined };
  const notice = noticeOf(message, recipient, mode, entry, s.relayId);
  const text = JSON.stringify(notice);
  let noticed: AppendResult;
  try {
    noticed = await s.queue.append(
      recipient,
      { id: notice.params.wmp.message_id as string, sender: entry.sender, body: text, notify: false },
      { expiresAt: entry.expiresAt },
    );
  } catch (e) {
    // No notice, no consent: nothing is held that its recipient cannot hear of.
    await s.queue.ack(key, [entry.id]).catch(() => undefined);
    throw e;
  }
  s.registered.evidence.witness(consignmentEvent('notification_sent', message, recipient, now));
  return { appended, key, offer: noticed.status === 'queued' ? { seq: noticed.seq, message: notice } : undefined };
}

/** The most of a `subject` a notice repeats. */
const MAX_SUBJECT = 256;

/**
 * What the recipient learns of a consented message before it consents (core §3.5): who sent it,
 * its metadata, the hash of its content (what a signed acceptance covers) and its size, never
 * the content. A notice of the relay's, with an id of its own.
 */
export function noticeOf(
  message: RoutedMessage,
  recipient: string,
  mode: ConsignmentMode,
  entry: Pick<HandoverEntry, 'id' | 'bytes' | 'expiresAt'>,
  relayId: string,
): RoutedMessage {
  const p = message.params;
  const delegate = (p.wmp.sender_delegate as { id?: unknown } | undefined)?.id;
  const text = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const subject = text(p.subject)?.slice(0, MAX_SUBJECT);
  const fields: Record<string, unknown> = {
    wmp: { version: '0.1', sender: relayId, message_id: newNoticeId() },
    message_id: entry.id,
    sender: p.wmp.sender,
    ...(typeof delegate === 'string' ? { sender_delegate: { id: delegate } } : {}),
    consignment_mode: mode,
    content_hash: contentHash(message),
    size: entry.bytes,
    ...(text(p.content_type) ? { content_type: p.content_type } : {}),
    ...(text(p.message_type) ? { message_type: p.message_type } : {}),
    ...(subject ? { subject } : {}),
    recipient,
    ...(text(p.recipient_assurance_level) ? { recipient_assurance_level: p.recipient_assurance_level } : {}),
    expires_at: rfc3339(entry.expiresAt),
  };
  return { jsonrpc: '2.0', method: NOTICE_METHOD, params: fields as RoutedMessage['params'] };
}

/** A consignment event about `message` for `recipient` (the principal and its delegate as the message names them). */
export function consignmentEvent(
  eventType: WitnessedEvent['eventType'],
  message: RoutedMessage,
  recipient: string,
  at: number,
  more: Partial<Pick<WitnessedEvent, 'reason' | 'receipt' | 'recipientDelegate'>> = {},
): WitnessedEvent {
  const wmp = message.params.wmp;
  const delegate = (wmp.sender_delegate as { id?: unknown } | undefined)?.id;
  const mode = message.params.consignment_mode;
  return {
    eventType,
    messageId: String(wmp.message_id),
    sender: String(wmp.sender),
    ...(typeof delegate === 'string' ? { senderDelegate: delegate } : {}),
    recipient,
    ...(typeof mode === 'string' ? { consignmentMode: mode } : {}),
    ...more,
    at,
  };
}
