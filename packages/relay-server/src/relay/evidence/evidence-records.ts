// The evidence records the relay makes (wmp-tables §9, the S-ev §4.2 field names): pure builders.
import { b64urlEncode, randomBytes } from '@wmp/jcs-signing';
import { type EvidenceEventType, type EvidenceReasonCode, rfc3339 } from '@wmp/jsonrpc-envelope';

export const EVIDENCE_VERSION = '1.0';

/** A fresh evidence id: 128 random bits. */
export function newEvidenceId(): string {
  return `ev-${b64urlEncode(randomBytes(16))}`;
}

/** What a record is about: the message as the relay took it. */
export interface RecordSubject {
  readonly messageId: string;
  readonly sender: string;
  /** b64url(SHA-256(JCS(content))). */
  readonly contentHash: string;
  readonly submittedAt: number;
  readonly sessionId: string | undefined;
  /** The delegate that sent for the sender (`wmp.sender_delegate.id`), if one did. */
  readonly senderDelegate?: string | undefined;
}

export interface RecordInput {
  readonly id: string;
  readonly type: EvidenceEventType;
  readonly subject: RecordSubject;
  /** When it happened (ms). */
  readonly at: number;
  /** The relay that witnessed it: its relay_id and public origin. */
  readonly issuer: { readonly id: string; readonly name: string };
  readonly recipient?: string | undefined;
  readonly reason?:
    | { readonly code: EvidenceReasonCode; readonly text?: string; readonly details?: unknown }
    | undefined;
  /** The case's first record, which this one follows. */
  readonly previous?: string | undefined;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/** The record as signed: only members with a value, so JCS of it is the same wherever it is rebuilt. */
export function evidenceRecord(input: RecordInput): Record<string, unknown> {
  const { subject } = input;
  const record: Record<string, unknown> = {
    evidence_id: input.id,
    evidence_version: EVIDENCE_VERSION,
    event_type: input.type,
    original_message_id: subject.messageId,
    original_sender: subject.sender,
    original_content_hash: { algorithm: 'sha-256', value: subject.contentHash },
    event_time: rfc3339(input.at),
    submission_time: rfc3339(subject.submittedAt),
    evidence_issuer: { id: input.issuer.id, name: input.issuer.name },
  };
  if (subject.senderDelegate !== undefined) record.original_sender_delegate = { id: subject.senderDelegate };
  if (input.recipient !== undefined) record.original_recipient = input.recipient;
  if (subject.sessionId !== undefined) record.session_id = subject.sessionId;
  if (input.previous !== undefined) record.previous_evidence_id = input.previous;
  if (input.reason !== undefined) {
    const { code, text, details } = input.reason;
    record.event_reason = {
      code,
      ...(text === undefined ? {} : { text }),
      ...(details === undefined ? {} : { details }),
    };
  }
  if (input.details !== undefined) record.details = { ...input.details };
  return record;
}

/** `event_reason.code` of a refusal, by the WMP error code that refused (wmp-tables §1, §9). */
const REASON_BY_CODE: Readonly<Record<number, EvidenceReasonCode>> = {
  [-32602]: 'invalid_format',
  [-32600]: 'invalid_format',
  [-31002]: 'policy_violation',
  [-31005]: 'policy_unsupported',
  [-31007]: 'quota_exceeded',
  [-31008]: 'invalid_recipient',
  [-31009]: 'policy_violation',
  [-31010]: 'invalid_format',
  [-31011]: 'invalid_format',
  [-31014]: 'quota_exceeded',
  [-31015]: 'delegation_invalid',
  [-31016]: 'consignment_mode_unsupported',
  [-31017]: 'insufficient_assurance',
  [-31018]: 'policy_unsupported',
};

/** The reason of a record about a refusal: its code's reason, with the error's code and `data.reason` as details. */
export function reasonOfRefusal(code: number, dataReason: string | undefined): NonNullable<RecordInput['reason']> {
  return {
    code: REASON_BY_CODE[code] ?? 'system_error',
    details: { error_code: code, ...(dataReason === undefined ? {} : { reason: dataReason }) },
  };
}

/** `event_reason.code` of a `dropped` status reason (a full queue, a reused id, a peer's refusal). */
export function reasonOfDrop(reason: string | undefined): NonNullable<RecordInput['reason']> {
  const code: EvidenceReasonCode =
    reason === 'message_id reused'
      ? 'invalid_format'
      : reason === 'peer_refused'
        ? 'policy_violation'
        : 'quota_exceeded';
  return { code, ...(reason === undefined ? {} : { details: { reason } }) };
}
