import { verifyEvidence } from '@wmp/jcs-signing';
import { type EvidenceRecord, parseEvidenceRecord } from '@wmp/jsonrpc-envelope';
import type { EvidenceCase, EvidenceStore } from '../../storage/contracts/evidence-store.js';
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

/**
 * Records a peer relay made about a message this relay forwarded (wmp-tables §9: delivery
 * evidence from the recipient's relay), taken from the peer's `wmp.evidence.notify`: the record
 * must be well formed, signed by the relay it names as its issuer (the peer, or one beyond it
 * whose record the peer passes back), and about a message under evidence here: our case of it (its
 * message id and sender) names the same content hash, and the recipient it names is one we took
 * the message for (a peer that never had the message knows neither its relay-assigned id nor its
 * hash). It may come before our own `relay_forwarded` (the peer records, then answers). It is
 * then kept in our repository (its parties the sender and that recipient) and passed on to the
 * sender, as a notify of ours carrying the peer's record unchanged. A record kept already is not
 * passed on again.
 */
export class PeerEvidence {
  readonly #d: PeerEvidenceDeps;

  constructor(deps: PeerEvidenceDeps) {
    this.#d = deps;
  }

  /** Takes one notify from the peer `peerId`; resolves whether it was taken (`stored`), or why not. */
  async take(peerId: string, params: Record<string, unknown>): Promise<'stored' | PeerEvidenceRefusal> {
    const checked = await this.#check(peerId, params);
    if (typeof checked === 'string') {
      this.#d.refusals.note(`peer_evidence_${checked}`);
      return checked;
    }
    const { record } = checked;
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
      issuer: record.evidence_issuer!.id,
      parties: [record.original_sender, ...(record.original_recipient ? [record.original_recipient] : [])],
      body: JSON.stringify(served),
      expiresAt: addDuration(this.#d.now(), this.#d.retention),
    });
    if (stored === 'stored') {
      const notify = await this.#d.issuer.notifyOf(record.evidence_id, served);
      // Through a relay in the middle: back to the one before it.
      const via = checked.case.via;
      await this.#d.notifier.send(via ?? record.original_sender, notify, via !== undefined);
    }
    return 'stored';
  }

  async #check(
    peerId: string,
    params: Record<string, unknown>,
  ): Promise<{ record: EvidenceRecord; case: EvidenceCase } | PeerEvidenceRefusal> {
    const record = parseEvidenceRecord(params.evidence);
    if (record === undefined) return 'malformed';
    if (params.timestamp_token !== undefined && typeof params.timestamp_token !== 'string') return 'timestamp_token';
    try {
      // Signed by the relay it names as its issuer: the peer, or a relay beyond it passing it back.
      await verifyEvidence(record, params.signed_evidence);
    } catch {
      return 'signature';
    }
    const c = await this.#d.store.caseOf(record.original_message_id, record.original_sender);
    if (
      c === undefined ||
      c.via === peerId ||
      record.original_content_hash.value !== c.contentHash ||
      (record.original_recipient !== undefined && !c.recipients.includes(record.original_recipient))
    ) {
      return 'not_forwarded';
    }
    return { record, case: c };
  }
}
