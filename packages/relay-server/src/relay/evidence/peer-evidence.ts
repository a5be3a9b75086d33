import { verifyEvidence } from '@wmp/jcs-signing';
import { type EvidenceRecord, parseEvidenceRecord } from '@wmp/jsonrpc-envelope';
import type { EvidenceStore } from '../../storage/contracts/evidence-store.js';
import type { Logger } from '../support/logger.js';
import type { RefusalLog } from '../support/refusals.js';
import { addDuration, type Duration } from './duration.js';
import type { EvidenceIssuer } from './evidence-issuer.js';
import type { EvidenceNotifier } from './evidence-notifier.js';

export interface PeerEvidenceDeps {
  readonly store: EvidenceStore;
  readonly issuer: EvidenceIssuer;
  readonly notifier: EvidenceNotifier;
  readonly retention: Duration;
  readonly refusals: RefusalLog;
  readonly logger: Logger;
  readonly now: () => number;
}

/** Why a peer's record was not taken (logged and counted; the peer is told `rejected`). */
export type PeerEvidenceRefusal = 'malformed' | 'signature' | 'not_forwarded' | 'timestamp_token';

/** The most records of a message read to find the forwards of it (a message has a few per recipient). */
const MAX_RECORDS_READ = 500;

/**
 * Records a peer relay made about a message this relay forwarded to it (wmp-tables §9: delivery
 * evidence from the recipient's relay), taken from the peer's `wmp.evidence.notify`: the record
 * must be well formed, signed by the peer itself (its `evidence_issuer.id` is the peer's
 * relay_id, the signature holds), and about a message of ours that we forwarded to that peer,
 * for a recipient we forwarded it for. It is then kept in our repository (its parties the sender
 * and that recipient) and passed on to the sender, as a notify of ours carrying the peer's record
 * unchanged. A record kept already is not passed on again.
 */
export class PeerEvidence {
  readonly #d: PeerEvidenceDeps;

  constructor(deps: PeerEvidenceDeps) {
    this.#d = deps;
  }

  /** Takes one notify from the peer `peerId`; resolves whether it was taken (`stored`), or why not. */
  async take(peerId: string, params: Record<string, unknown>): Promise<'stored' | PeerEvidenceRefusal> {
    const refusal = await this.#check(peerId, params);
    if (typeof refusal === 'string') {
      this.#d.refusals.note(`peer_evidence_${refusal}`);
      return refusal;
    }
    const record = refusal;
    const { signed_evidence, timestamp_token } = params;
    const served = {
      evidence: record,
      signed_evidence,
      ...(typeof timestamp_token === 'string' ? { timestamp_token } : {}),
    };
    const at = Date.parse(record.event_time);
    const stored = await this.#d.store.add({
      id: record.evidence_id,
      messageId: record.original_message_id,
      sender: record.original_sender,
      sessionId: undefined,
      eventType: record.event_type,
      eventTime: at,
      issuer: peerId,
      parties: [record.original_sender, ...(record.original_recipient ? [record.original_recipient] : [])],
      body: JSON.stringify(served),
      expiresAt: addDuration(this.#d.now(), this.#d.retention),
    });
    if (stored === 'stored') {
      const c = await this.#d.store.caseOf(record.original_message_id, record.original_sender);
      const notify = await this.#d.issuer.notifyOf(record.evidence_id, served);
      // Through a relay in the middle: back to the one before it.
      const via = c?.via;
      await this.#d.notifier.send(via ?? record.original_sender, notify, via !== undefined);
    }
    return 'stored';
  }

  async #check(peerId: string, params: Record<string, unknown>): Promise<EvidenceRecord | PeerEvidenceRefusal> {
    const record = parseEvidenceRecord(params.evidence);
    if (record === undefined) return 'malformed';
    if (params.timestamp_token !== undefined && typeof params.timestamp_token !== 'string') return 'timestamp_token';
    try {
      await verifyEvidence(record, params.signed_evidence, { issuer: peerId });
    } catch {
      return 'signature';
    }
    if (!(await this.#forwardedTo(peerId, record))) return 'not_forwarded';
    return record;
  }

  /** Whether this relay recorded forwarding the record's message to `peerId` (for its recipient, when it names one). */
  async #forwardedTo(peerId: string, record: EvidenceRecord): Promise<boolean> {
    const ours = this.#d.issuer.relayId;
    const page = await this.#d.store.find(
      { messageId: record.original_message_id },
      record.original_sender,
      undefined,
      MAX_RECORDS_READ,
    );
    return page.entries.some((e) => {
      if (e.eventType !== 'relay_forwarded' || e.issuer !== ours || e.sender !== record.original_sender) return false;
      const served = JSON.parse(e.body) as {
        evidence?: { details?: { next_relay_id?: unknown }; original_recipient?: unknown };
      };
      const forwarded = served.evidence;
      return (
        forwarded?.details?.next_relay_id === peerId &&
        (record.original_recipient === undefined || forwarded.original_recipient === record.original_recipient)
      );
    });
  }
}
