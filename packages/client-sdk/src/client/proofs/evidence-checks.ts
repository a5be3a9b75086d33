import { jcsBytes, verifyEvidence } from '@wmp/jcs-signing';
import { WmpError } from '@wmp/jsonrpc-envelope';
import { isRecord, str } from '../json-values.js';
import type { MessageChecks } from './message-checks.js';
import type { ReceivedEvidence } from './types.js';

/** What a record carries beside its fields: its JWS and its token (wmp-tables §9). */
export interface EvidenceParts {
  readonly evidence: unknown;
  readonly signed_evidence?: unknown;
  readonly timestamp_token?: unknown;
}

/**
 * Checks an evidence record as received (a notify's `{evidence, signed_evidence,
 * timestamp_token}`, or a record read from the repository, split the same way): its JWS against
 * the relay it names as issuer (`verifyEvidence`), its RFC 3161 token over JCS(record) against
 * the client's TSA anchors. A failed check never drops the record: the application is told.
 */
export async function checkEvidence(parts: EvidenceParts, checks: MessageChecks): Promise<ReceivedEvidence> {
  const record = isRecord(parts.evidence) ? parts.evidence : {};
  const issuer = isRecord(record.evidence_issuer) ? str(record.evidence_issuer.id) : undefined;
  const signedEvidence = str(parts.signed_evidence);
  const timestampToken = str(parts.timestamp_token);
  const [signature, timestamp] = await Promise.all([
    verifyEvidence(record, signedEvidence).then(
      () => ({ valid: true }),
      (e: unknown) => ({ valid: false, reason: reasonOf(e) }),
    ),
    timestampToken === undefined ? undefined : checks.timestampOver(timestampToken, () => jcsBytes(record)),
  ]);
  return {
    id: str(record.evidence_id),
    eventType: str(record.event_type),
    messageId: str(record.original_message_id),
    sender: str(record.original_sender),
    recipient: str(record.original_recipient),
    issuer,
    time: str(record.event_time),
    signature,
    timestamp,
    record,
    signedEvidence,
    timestampToken,
  };
}

/** A record as the repository serves it (its fields with `signed_evidence` and `timestamp_token` beside them), split. */
export function servedParts(served: unknown): EvidenceParts {
  const { signed_evidence, timestamp_token, ...evidence } = isRecord(served) ? served : {};
  return { evidence, signed_evidence, timestamp_token };
}

function reasonOf(e: unknown): string {
  const reason = e instanceof WmpError && isRecord(e.data) ? str(e.data.reason) : undefined;
  return reason ?? 'malformed';
}
