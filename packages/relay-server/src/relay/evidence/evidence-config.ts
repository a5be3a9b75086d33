import type { KeyResolver, X5cChainVerifier } from '@wmp/jcs-signing';
import { type Duration, parseDuration } from './duration.js';

/** What obtains an RFC 3161 token over some bytes: `TsaClient` of `@wmp/session/timestamp` is one. */
export interface EvidenceTimestamper {
  timestamp(content: Uint8Array): Promise<{ readonly token: string }>;
}

/**
 * The evidence profile at the relay (wmp-tables §9, docs/wmp-profile.md "Evidence"): what it
 * offers, how long it keeps records, and where their timestamps come from.
 */
export interface EvidenceConfig {
  /**
   * Offer the `evidence` capability (default true). Off: no session negotiates it, and a message
   * a peer forwards under evidence is refused with -31009 (this relay would witness nothing).
   */
  readonly enabled?: boolean;
  /** How long records are kept, an ISO 8601 duration (default `P5Y`; eIDAS asks `P10Y`). */
  readonly retention?: string;
  /**
   * A TSA for the records' RFC 3161 tokens over JCS(record) (`new TsaClient({url, anchors})`),
   * and its URL as the capability's `timestamp_authority`. Without one, records carry no token.
   */
  readonly tsa?: { readonly url: string; readonly client: EvidenceTimestamper };
  /** Checks the chains of sender signatures made with `x5c` (X.509 senders); without it they are refused. */
  readonly signatureChains?: X5cChainVerifier;
  /** Finds the keys of sender signatures by kid; default did:key and did:jwk. */
  readonly keyResolver?: KeyResolver;
}

/**
 * When the relay signs its relay_chain entry (core §5.7): `when-needed` (default) when the
 * message leaves for another relay or is under evidence; `always` on every entry.
 */
export type RelayChainSignatures = 'when-needed' | 'always';

export const DEFAULT_EVIDENCE_RETENTION = 'P5Y';

export interface ResolvedEvidenceConfig {
  readonly enabled: boolean;
  readonly retention: Duration;
  readonly tsa: EvidenceConfig['tsa'];
  readonly signatureChains: X5cChainVerifier | undefined;
  readonly keyResolver: KeyResolver | undefined;
}

/** The evidence config with its defaults; a retention that is no ISO 8601 duration throws `RangeError`. */
export function resolveEvidenceConfig(config: EvidenceConfig = {}): ResolvedEvidenceConfig {
  const retention = parseDuration(config.retention ?? DEFAULT_EVIDENCE_RETENTION);
  if (retention === undefined) throw new RangeError('evidence retention must be an ISO 8601 duration such as P5Y');
  return {
    enabled: config.enabled ?? true,
    retention,
    tsa: config.tsa,
    signatureChains: config.signatureChains,
    keyResolver: config.keyResolver,
  };
}
