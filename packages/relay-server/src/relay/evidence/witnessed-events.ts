import type { EvidenceReasonCode } from '@wmp/jsonrpc-envelope';
import type { RegisteredEvidenceHooks, WitnessedEvent } from '../support/evidence-hooks.js';
import type { EvidenceRecorder } from './evidence-witness.js';

/** What a witnessed consignment step says beyond its type: the delegates, the receipt, the mode. */
function detailsOf(e: WitnessedEvent): Record<string, unknown> | undefined {
  const details: Record<string, unknown> = {};
  if (e.senderDelegate !== undefined) details.original_sender_delegate = e.senderDelegate;
  if (e.recipientDelegate !== undefined) details.original_recipient_delegate = e.recipientDelegate;
  if (e.receipt !== undefined) details.acceptance_signature = e.receipt;
  if (e.consignmentMode !== undefined) details.consignment_mode = e.consignmentMode;
  return Object.keys(details).length === 0 ? undefined : details;
}

/**
 * The consignment steps of registered delivery as evidence records (docs/wmp-profile.md,
 * "Evidence"): each witnessed event is recorded by the relay's recorder (which records nothing
 * for a message under no evidence); an acceptance also hands the content over, so
 * `content_handover` follows `acceptance_confirmed` (delivery records no handover for a
 * consented message). Hooks the operator configured are called too, first.
 */
export function evidenceHooksOf(
  recorder: EvidenceRecorder,
  configured?: RegisteredEvidenceHooks,
): RegisteredEvidenceHooks {
  return {
    witness(e) {
      configured?.witness(e);
      const about = { messageId: e.messageId, sender: e.sender, recipient: e.recipient };
      const details = detailsOf(e);
      void recorder.record(e.eventType, about, {
        ...(e.reason === undefined ? {} : { reason: { code: e.reason as EvidenceReasonCode } }),
        ...(details === undefined ? {} : { details }),
        at: e.at,
      });
      if (e.eventType === 'acceptance_confirmed') void recorder.record('content_handover', about, { at: e.at });
    },
  };
}
