// What the CLI learnt about the live messages sent from this home, kept in the home's store so
// that `wmp status <message-id>` can tell later: the relay's answer to the send, then every
// status that reached a wmp process of this home (send, listen, connect). One record per
// message id under `cli/sent/`; the oldest go once there are more than MAX_SENT.
import type { MessageStatusEvent } from '@wmp/client-sdk';
import { CliError } from './errors.js';
import type { Home } from './home.js';

export const SENT_PREFIX = 'cli/sent/';
const MAX_SENT = 500;
const KEEP_SENT = 400;
/** A relay's reason is kept up to this many characters. */
const MAX_REASON = 200;

/** What the relay said of a message: its answer to the send (`accepted`, `queued`), then its statuses. */
export type SentStatus = MessageStatusEvent['status'] | 'accepted';
const STATUSES: ReadonlySet<string> = new Set<SentStatus>(['accepted', 'queued', 'delivered', 'expired', 'dropped']);
const TERMINAL: ReadonlySet<SentStatus> = new Set<SentStatus>(['delivered', 'expired', 'dropped']);

/** A message id worth a store key: printable ASCII, bounded (the relay's are `msg-` + hex). */
const MESSAGE_ID = /^[\x21-\x7e]{1,200}$/;

export function isMessageId(id: string): boolean {
  return MESSAGE_ID.test(id);
}

export interface SentRecord {
  readonly message_id: string;
  /** Whom it was sent to and through which relay: null when only a status about it was seen. */
  readonly to: string | null;
  readonly relay: string | null;
  readonly sent_at: string | null;
  readonly status: SentStatus;
  /** What the relay said about it (`data.reason` of a `dropped`, say), as it came. */
  readonly reason: string | null;
  readonly updated_at: string;
}

// One home's records are read, changed and written by one wmp process at a time here (statuses
// can come in bursts): a chain per process keeps each read-modify-write whole.
let chain: Promise<unknown> = Promise.resolve();
function serially<T>(work: () => Promise<T>): Promise<T> {
  const next = chain.then(work, work);
  chain = next.catch(() => undefined);
  return next;
}

function parseRecord(text: string, id: string): SentRecord | undefined {
  try {
    const r = JSON.parse(text) as Record<string, unknown>;
    const optional = (v: unknown) => v === null || typeof v === 'string';
    if (
      r.message_id === id &&
      typeof r.status === 'string' &&
      STATUSES.has(r.status) &&
      typeof r.updated_at === 'string' &&
      optional(r.to) &&
      optional(r.relay) &&
      optional(r.sent_at) &&
      optional(r.reason)
    ) {
      return r as unknown as SentRecord;
    }
  } catch {
    // Damaged: reported below.
  }
  return undefined;
}

/** The record of `id`, or undefined when this home knows nothing of it. */
export async function loadSent(home: Home, id: string): Promise<SentRecord | undefined> {
  if (!isMessageId(id)) return undefined;
  const text = await home.store().get(SENT_PREFIX + id);
  if (text === undefined) return undefined;
  const record = parseRecord(text, id);
  if (!record) {
    throw new CliError(`the record of message ${id} in ${home.dir} is damaged`, 'Nothing more is known of it.');
  }
  return record;
}

async function save(home: Home, record: SentRecord): Promise<void> {
  await home.store().set(SENT_PREFIX + record.message_id, JSON.stringify(record));
}

/** Keeps the newest KEEP_SENT records once there are more than MAX_SENT. */
async function prune(home: Home): Promise<void> {
  const keys = await home.store().keys(SENT_PREFIX);
  if (keys.length <= MAX_SENT) return;
  const dated = await Promise.all(
    keys.map(async (key) => {
      const text = await home.store().get(key);
      const record = text === undefined ? undefined : parseRecord(text, key.slice(SENT_PREFIX.length));
      return { key, at: record?.updated_at ?? '' };
    }),
  );
  dated.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  for (const { key } of dated.slice(0, dated.length - KEEP_SENT)) await home.store().delete(key);
}

/** A message the relay took (`send`): what it answered. */
export function recordSent(
  home: Home,
  sent: { messageId: string; to: string; relay: string; status: SentStatus | undefined },
): Promise<void> {
  if (!isMessageId(sent.messageId)) return Promise.resolve();
  return serially(async () => {
    const now = new Date().toISOString();
    const current = await loadSent(home, sent.messageId).catch(() => undefined);
    await save(home, {
      message_id: sent.messageId,
      to: sent.to,
      relay: sent.relay,
      sent_at: now,
      // A status may have come before the send's own answer (it is recorded as it comes).
      status: current && TERMINAL.has(current.status) ? current.status : (sent.status ?? 'queued'),
      reason: current?.reason ?? null,
      updated_at: now,
    });
    await prune(home);
  });
}

/**
 * A status about a message (ours or not recorded yet): kept unless a terminal one is known
 * already (a message has exactly one; a late `queued` does not undo it). Resolves with the record.
 */
export function recordStatus(home: Home, status: MessageStatusEvent): Promise<SentRecord | undefined> {
  if (!isMessageId(status.messageId)) return Promise.resolve(undefined);
  return serially(async () => {
    const current = await loadSent(home, status.messageId).catch(() => undefined);
    if (current && TERMINAL.has(current.status)) return current;
    const record: SentRecord = {
      message_id: status.messageId,
      to: current?.to ?? status.recipient ?? null,
      relay: current?.relay ?? null,
      sent_at: current?.sent_at ?? null,
      status: status.status,
      reason: status.reason === undefined ? null : status.reason.slice(0, MAX_REASON),
      updated_at: new Date().toISOString(),
    };
    await save(home, record);
    if (!current) await prune(home);
    return record;
  });
}
