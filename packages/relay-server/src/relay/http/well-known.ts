import type { Keypair } from '@wmp/jcs-signing';
import { schemeFamilies } from '@wmp/session';
import { wsOrigin } from '../sessions/auth-context.js';
import type { RelayLimits, RelayTimings } from '../support/limits.js';

export interface WellKnownInput {
  /** The public origin, e.g. `https://relay.example`. */
  readonly origin: string;
  readonly identity: Keypair;
  readonly limits: RelayLimits;
  readonly timings: RelayTimings;
  readonly maxQueued: number;
  /** What the relay's authenticators prove, exact schemes (`WmpServer.acceptedSchemes`). */
  readonly acceptedSchemes: readonly string[];
  readonly privacy?: Readonly<Record<string, string>>;
  /** The ERDS capabilities published as `erds` (core §7.5.1.1). */
  readonly erds?: Readonly<Record<string, unknown>>;
  /** What the relay asks of messages to recipients here (core §7.5.1.2). */
  readonly recipientMetadata?: Readonly<Record<string, unknown>>;
  /** The `evidence` capability, when the relay offers it (wmp-tables §4): peers read it before they forward under evidence. */
  readonly evidence?: Readonly<Record<string, unknown>>;
}

/**
 * `/.well-known/wmp-configuration` (core §7.5.1, transport §6.2): the spec keys, plus go-wmp's
 * `rpc` / `events` endpoint keys and boolean-free capability objects, so both kinds of client
 * find the relay. `relay_id` and `relay_key` say which key signs this relay's relay_chain entries.
 * `accepted_schemes` lists scheme families as the spec's examples do (`did`, `x509`, `uri`), which
 * is what clients match; the exact schemes go in `accepted_identifier_schemes` (ours).
 */
export function wellKnownConfiguration(input: WellKnownInput): Record<string, unknown> {
  const https = `${input.origin}/wmp`;
  return {
    supported_versions: ['0.1'],
    endpoints: {
      websocket: `${wsOrigin(input.origin)}/wmp`,
      https,
      sse: `${https}/events`,
      rpc: https,
      events: `${https}/events`,
    },
    transports: ['websocket', 'https'],
    preferred_transport: 'websocket',
    relay: https,
    relay_id: input.identity.did,
    relay_key: input.identity.multikey,
    security_modes: ['tls', 'mls', 'mls-optional'],
    accepted_schemes: schemeFamilies(input.acceptedSchemes),
    accepted_identifier_schemes: [...input.acceptedSchemes],
    mls_key_packages: `${input.origin}/.well-known/mls-key-packages`,
    capabilities: {
      messaging: { max_size: input.limits.maxMessageBytes },
      relay: { destinations: ['*'] },
      offline: { max_queued: input.maxQueued, ttl: input.timings.messageTtlSeconds, status_notifications: true },
      ...(input.evidence ? { evidence: { ...input.evidence } } : {}),
    },
    privacy: input.privacy ?? { metadata_retention: 'session_only', content_retention: 'until_delivered' },
    ...(input.recipientMetadata ? { recipient_metadata: input.recipientMetadata } : {}),
    ...(input.erds ? { erds: withEvidence(input.erds, input.evidence) } : {}),
  };
}

/** The operator's `erds` object, naming the evidence repository and its retention when the relay keeps one (§7.5.1.1). */
function withEvidence(
  erds: Readonly<Record<string, unknown>>,
  evidence: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> {
  if (evidence === undefined) return erds;
  return { evidence_repository: evidence.repository, evidence_retention: evidence.retention_period, ...erds };
}
