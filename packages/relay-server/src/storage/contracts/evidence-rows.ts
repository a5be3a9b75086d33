import type { EvidenceEntry } from './evidence-store.js';

/**
 * The `evidence_records` columns, the same in the SQLite and PostgreSQL schemas: what a read
 * selects (`seq` is the page position), and what an insert writes, in the order of
 * `evidenceRowValues`.
 */
export const EVIDENCE_COLUMNS = {
  read: 'seq, id, message_id, sender, session_id, event_type, event_time, issuer, parties, expires_at, body',
  insert: 'id, message_id, sender, session_id, event_type, event_time, issuer, parties, expires_at, bytes, body',
} as const;

/**
 * A row of `evidence_records` as a read returns it, once the adapter has decoded `parties` (a
 * JSON text in SQLite, an array in PostgreSQL). Times may come back as numeric text (BIGINT).
 */
export interface EvidenceRow {
  readonly seq: number;
  readonly id: string;
  readonly message_id: string;
  readonly sender: string;
  readonly session_id: string | null;
  readonly event_type: string;
  readonly event_time: number;
  readonly issuer: string;
  readonly parties: readonly string[];
  readonly expires_at: number;
  readonly body: string;
}

/** The record a row holds. */
export function evidenceEntryOf(row: EvidenceRow): EvidenceEntry {
  return {
    id: row.id,
    messageId: row.message_id,
    sender: row.sender,
    sessionId: row.session_id ?? undefined,
    eventType: row.event_type,
    eventTime: Number(row.event_time),
    issuer: row.issuer,
    parties: row.parties,
    body: row.body,
    expiresAt: Number(row.expires_at),
  };
}

/**
 * The values of an insert, in the order of `EVIDENCE_COLUMNS.insert`: `parties` as the adapter
 * stores them, `bytes` the body's UTF-8 length.
 */
export function evidenceRowValues<P>(e: EvidenceEntry, parties: P, bytes: number) {
  return [
    e.id,
    e.messageId,
    e.sender,
    e.sessionId ?? null,
    e.eventType,
    e.eventTime,
    e.issuer,
    parties,
    e.expiresAt,
    bytes,
    e.body,
  ] as const;
}
