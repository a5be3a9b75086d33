import type { EvidenceEventType } from '@wmp/jsonrpc-envelope';
import type { SessionRecord } from '@wmp/session';
import type { ResolvedEvidenceConfig } from './evidence-config.js';

/** The event types this relay witnesses and records (wmp-tables §9): what its capability lists. */
export const RELAY_EVENT_TYPES: readonly EvidenceEventType[] = Object.freeze([
  'submission_accepted',
  'submission_rejected',
  'relay_accepted',
  'relay_rejected',
  'relay_forwarded',
  'delivery_confirmed',
  'delivery_failed',
  'delivery_expired',
  'content_handover',
  'retrieval_confirmed',
  'retrieval_timeout',
  'notification_sent',
  'acceptance_confirmed',
  'acceptance_rejected',
  'acceptance_expired',
]);

/** The event types `session` negotiated under `evidence`, or undefined when it negotiated none. */
export function evidenceTypesOf(session: Pick<SessionRecord, 'capabilities'>): readonly string[] | undefined {
  const evidence = session.capabilities.evidence;
  if (evidence === undefined) return undefined;
  const types = (evidence as { event_types?: unknown }).event_types;
  return Array.isArray(types) ? types.filter((t): t is string => typeof t === 'string') : [];
}

/** Whether messages of `session` are under evidence: it negotiated `evidence` with at least one event type. */
export function wantsEvidence(session: Pick<SessionRecord, 'capabilities'>): boolean {
  return (evidenceTypesOf(session)?.length ?? 0) > 0;
}

/**
 * The `evidence` capability the relay offers (wmp-tables §4): its event types, repository,
 * retention, signing algorithm and TSA. `repository` is read when a session negotiates (the
 * origin is known once the relay listens).
 */
export function evidenceCapability(
  config: ResolvedEvidenceConfig,
  origin: () => string,
): { readonly event_types: string[] } & Record<string, unknown> {
  return {
    event_types: [...RELAY_EVENT_TYPES],
    get repository() {
      return `${origin()}/evidence`;
    },
    retention_period: config.retention.text,
    signing_algorithm: 'EdDSA',
    ...(config.tsa ? { timestamp_authority: config.tsa.url } : {}),
  };
}
