import { checkCap } from './limits.js';
import type { Totals } from './totals.js';

/**
 * A message under evidence at this relay (wmp-tables §9): what every record of it needs, opened
 * before the message is stored for its recipients (so that no delivery can come before it) and
 * kept until the message can no longer give rise to any record.
 */
export interface EvidenceCase {
  readonly messageId: string;
  /** The original sender (`original_sender`). */
  readonly sender: string;
  /** The recipients this relay took it for (what a record about a recipient may name). */
  readonly recipients: readonly string[];
  /** The sender's session at this relay, when it submitted here. */
  readonly sessionId: string | undefined;
  /** `original_content_hash.value`: b64url(SHA-256(JCS(content))). */
  readonly contentHash: string;
  /** When this relay accepted it (ms since the epoch): `submission_time`. */
  readonly submittedAt: number;
  /**
   * The id of the case's first record (`submission_accepted` or `_rejected` here, `relay_accepted`
   * for a message a peer forwarded): later ones name it as `previous_evidence_id`.
   */
  readonly firstEvidenceId: string;
  /** The event types the sender's session negotiated: only these are recorded (empty: every type). */
  readonly eventTypes: readonly string[];
  /** The peer relay (its relay_id) the message came through: its records go back there. */
  readonly via: string | undefined;
  /**
   * The message's `consignment_mode` (core §3.5), undefined for `basic`: only a basic message's
   * content is handed over on delivery (`content_handover` then); a consented one's after acceptance.
   */
  readonly consignment: string | undefined;
  /** When the case goes (ms): once the message has left every queue it can be in. */
  readonly expiresAt: number;
}

/** One signed evidence record as the repository keeps it. */
export interface EvidenceEntry {
  /** `evidence_id`: unique in the store. */
  readonly id: string;
  readonly messageId: string;
  readonly sender: string;
  readonly sessionId: string | undefined;
  readonly eventType: string;
  /** `event_time`, ms since the epoch. */
  readonly eventTime: number;
  /** Who signed it (`evidence_issuer.id`): this relay, or a peer whose record came back. */
  readonly issuer: string;
  /** The identities that may read it (the sender, its delegate, the recipients it is about). */
  readonly parties: readonly string[];
  /** The JSON text served: `{evidence, signed_evidence, timestamp_token?}`, exactly as signed. */
  readonly body: string;
  /** When retention ends (ms): the sweeper removes it then. */
  readonly expiresAt: number;
}

/** What a repository read selects (wmp-tables §9: by message, or by session within a time range). */
export type EvidenceQuery =
  | { readonly messageId: string }
  | { readonly sessionId: string; readonly since?: number; readonly until?: number };

export interface EvidencePage {
  /** In the order they were stored. */
  readonly entries: readonly EvidenceEntry[];
  /** Every entry the query selects for the party (all pages). */
  readonly total: number;
  /** The cursor of the next page (opaque), or undefined at the end. */
  readonly next: string | undefined;
}

/** What the repository holds, for an operator (`wmp-relay admin evidence`). */
export interface EvidenceOverview {
  readonly records: number;
  readonly bytes: number;
  readonly cases: number;
  /** The earliest `event_time` held (ms), or undefined when empty. */
  readonly oldestAt: number | undefined;
}

export interface EvidenceLimits {
  /** Records held at most; past it no evidence case opens and no record is added (`full`). */
  readonly maxRecords: number;
}

export const DEFAULT_EVIDENCE_LIMITS: EvidenceLimits = Object.freeze({ maxRecords: 10_000_000 });

/** Validates an evidence configuration once, at construction: a bad cap is a startup error. */
export function checkEvidenceLimits(limits: Partial<EvidenceLimits>): EvidenceLimits {
  return { maxRecords: checkCap(limits.maxRecords ?? DEFAULT_EVIDENCE_LIMITS.maxRecords, 'maxRecords') };
}

/**
 * The evidence repository (wmp-tables §9): signed records of what the relay witnessed, kept for
 * their retention period and served to the parties of their message, and the open cases that
 * records are made from. Writes are idempotent on their ids (a case or a record written twice, on
 * two nodes or after a retry, is kept once), and a store at `maxRecords` refuses new records,
 * checked in the same atomic operation as the insert.
 */
export interface EvidenceStore {
  /** Opens the case of a message: `exists` when it is open already (nothing written). */
  open(evidenceCase: EvidenceCase): Promise<'opened' | 'exists'>;
  /** The open case of `messageId` from `sender`, if any. */
  caseOf(messageId: string, sender: string): Promise<EvidenceCase | undefined>;
  /** Adds one record: `exists` when one with its id is held, `full` at `maxRecords`. */
  add(entry: EvidenceEntry): Promise<'stored' | 'exists' | 'full'>;
  get(id: string): Promise<EvidenceEntry | undefined>;
  /**
   * The records `query` selects that `party` may read, in the order they were stored, at most
   * `limit` (<= 500) after `cursor` (a page's `next`).
   */
  find(query: EvidenceQuery, party: string, cursor: string | undefined, limit: number): Promise<EvidencePage>;
  /** Removes at most `batch` (<= 1000) records past retention and cases past expiry; returns how many rows. */
  sweepExpired(now: number, batch: number): Promise<number>;
  /** Records held and their bytes, O(1). */
  totals(): Promise<Totals>;
  overview(): Promise<EvidenceOverview>;
  readonly limits: EvidenceLimits;
}
