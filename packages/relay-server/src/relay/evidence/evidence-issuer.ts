import { jcsBytes, type Keypair, signEvidence, signMessage } from '@wmp/jcs-signing';
import type { EvidenceEntry } from '../../storage/contracts/evidence-store.js';
import { EVIDENCE_METHOD, type RoutedMessage } from '../routing/routed-message.js';
import type { Logger } from '../support/logger.js';
import { addDuration, type Duration } from './duration.js';
import type { EvidenceTimestamper } from './evidence-config.js';
import { evidenceRecord, type RecordInput } from './evidence-records.js';

/** A record made, signed (and timestamped), as it is kept and as it is sent. */
export interface IssuedEvidence {
  readonly entry: EvidenceEntry;
  /** `{evidence, signed_evidence, timestamp_token?}`: what is served and what a notify carries. */
  readonly served: Readonly<Record<string, unknown>>;
}

export interface EvidenceIssuerDeps {
  readonly identity: Keypair;
  readonly retention: Duration;
  readonly tsa: EvidenceTimestamper | undefined;
  readonly logger: Logger;
  /** A TSA that failed (its record goes without a token). */
  readonly tsaFailed: () => void;
}

/**
 * Makes the relay's evidence records (wmp-tables §9): the record, its JWS by the relay's key over
 * JCS(record), an RFC 3161 token over the same bytes when a TSA is configured (a TSA that fails
 * leaves the token out, logged: the record is still evidence, signed by the relay), and the
 * repository entry kept for the retention period.
 */
export class EvidenceIssuer {
  readonly #d: EvidenceIssuerDeps;

  constructor(deps: EvidenceIssuerDeps) {
    this.#d = deps;
  }

  get relayId(): string {
    return this.#d.identity.did;
  }

  async issue(input: RecordInput, parties: readonly string[]): Promise<IssuedEvidence> {
    const record = evidenceRecord(input);
    const signed = await signEvidence(record, this.#d.identity);
    const token = await this.#token(record);
    const served = {
      evidence: record,
      signed_evidence: signed,
      ...(token === undefined ? {} : { timestamp_token: token }),
    };
    const { subject } = input;
    return {
      served,
      entry: {
        id: input.id,
        messageId: subject.messageId,
        sender: subject.sender,
        sessionId: subject.sessionId,
        eventType: input.type,
        eventTime: input.at,
        issuer: input.issuer.id,
        parties: [...new Set(parties)],
        body: JSON.stringify(served),
        expiresAt: addDuration(input.at, this.#d.retention),
      },
    };
  }

  /**
   * The `wmp.evidence.notify` that carries `served` (a record of ours, or a peer's passed on),
   * signed by this relay as its sender (the evidence profile signs every evidence message), its
   * queue id the record's id (acknowledged with `wmp.evidence.ack`).
   */
  async notifyOf(evidenceId: string, served: Readonly<Record<string, unknown>>): Promise<RoutedMessage> {
    const message = {
      jsonrpc: '2.0' as const,
      method: EVIDENCE_METHOD,
      params: { wmp: { version: '0.1', sender: this.#d.identity.did, message_id: evidenceId }, ...served },
    };
    return (await signMessage(message, this.#d.identity)) as RoutedMessage;
  }

  async #token(record: Record<string, unknown>): Promise<string | undefined> {
    const tsa = this.#d.tsa;
    if (tsa === undefined) return undefined;
    try {
      return (await tsa.timestamp(jcsBytes(record))).token;
    } catch (e) {
      this.#d.tsaFailed();
      this.#d.logger.warn('relay.evidence.tsa_failed', { error: (e as { code?: string }).code ?? 'unknown' });
      return undefined;
    }
  }
}
