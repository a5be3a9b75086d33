import * as v from 'valibot';
import { anyObject, base64url, identifier, nonEmptyString, stringList, timestamp } from './common.js';
import { methodParams, notificationMethod } from './method-spec.js';

/** The evidence profile's event types (wmp-tables §9), by group. */
export const EVIDENCE_EVENT_TYPES = [
  'submission_accepted',
  'submission_rejected',
  'relay_accepted',
  'relay_rejected',
  'relay_forwarded',
  'delivery_attempted',
  'delivery_confirmed',
  'delivery_failed',
  'delivery_expired',
  'content_handover',
  'content_handover_failed',
  'retrieval_confirmed',
  'retrieval_timeout',
  'content_access_tracked',
  'acceptance_confirmed',
  'acceptance_rejected',
  'acceptance_expired',
  'notification_sent',
  'notification_failed',
  'notification_delivered',
  'read_confirmed',
  'processed_confirmed',
  'flow_completed',
  'session_evidence',
  'relay_to_external',
  'relay_to_external_failed',
  'received_from_external',
] as const;
export type EvidenceEventType = (typeof EVIDENCE_EVENT_TYPES)[number];

/** `event_reason.code` values (wmp-tables §9). */
export const EVIDENCE_REASON_CODES = [
  'policy_violation',
  'quota_exceeded',
  'invalid_format',
  'invalid_recipient',
  'insufficient_assurance',
  'consignment_mode_unsupported',
  'policy_unsupported',
  'recipient_rejected',
  'timeout',
  'system_error',
  'delegation_invalid',
] as const;
export type EvidenceReasonCode = (typeof EVIDENCE_REASON_CODES)[number];

const party = v.looseObject({ id: identifier, identity_attributes: v.optional(anyObject) });

/**
 * One evidence record (wmp-tables §9, the S-ev §4.2 field names): the required fields typed, the
 * optional ones that have a fixed shape checked, anything else passed through (`extensions`,
 * `details`, ...).
 */
export const EvidenceRecordSchema = v.looseObject({
  evidence_id: v.pipe(nonEmptyString, v.maxLength(256)),
  evidence_version: nonEmptyString,
  event_type: v.picklist(EVIDENCE_EVENT_TYPES),
  original_message_id: v.pipe(nonEmptyString, v.maxLength(256)),
  original_sender: identifier,
  original_content_hash: v.looseObject({
    algorithm: v.picklist(['sha-256', 'sha-384', 'sha-512']),
    value: v.pipe(base64url, v.minLength(1)),
  }),
  event_time: timestamp,
  event_reason: v.optional(
    v.looseObject({
      code: v.picklist(EVIDENCE_REASON_CODES),
      text: v.optional(v.string()),
      details: v.optional(v.unknown()),
    }),
  ),
  original_recipient: v.optional(identifier),
  original_sender_delegate: v.optional(party),
  original_recipient_delegate: v.optional(party),
  submission_time: v.optional(timestamp),
  evidence_issuer: v.optional(
    v.looseObject({ id: identifier, name: v.optional(v.string()), country: v.optional(v.string()) }),
  ),
  session_id: v.optional(v.pipe(nonEmptyString, v.maxLength(256))),
  previous_evidence_id: v.optional(v.pipe(nonEmptyString, v.maxLength(256))),
});
export type EvidenceRecord = v.InferOutput<typeof EvidenceRecordSchema>;

/** `value` as an evidence record when it is one (the required fields and the typed optional ones), else undefined. */
export function parseEvidenceRecord(value: unknown): EvidenceRecord | undefined {
  const parsed = v.safeParse(EvidenceRecordSchema, value);
  return parsed.success ? parsed.output : undefined;
}

export const evidenceMethods = {
  // go-wmp and wmp-js send the evidence fields flat beside `wmp` (C8); the spec nests them in
  // `evidence`. Both shapes pass here; the evidence profile checks the content. A relay sends it
  // to the original sender on the session that negotiated `evidence`, beside the record's
  // compact JWS and RFC 3161 token.
  'wmp.evidence.notify': notificationMethod(
    methodParams({
      evidence: v.optional(anyObject),
      signed_evidence: v.optional(v.pipe(v.string(), v.maxLength(64 * 1024))),
      timestamp_token: v.optional(v.pipe(v.string(), v.maxLength(64 * 1024))),
    }),
    { capability: 'evidence', toInitiator: 'session' },
  ),
  'wmp.evidence.ack': notificationMethod(
    methodParams({
      evidence_ids: v.pipe(stringList, v.minLength(1)),
      status: v.picklist(['accepted', 'rejected', 'stored']),
    }),
    { capability: 'evidence' },
  ),
} as const;
