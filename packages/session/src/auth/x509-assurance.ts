// Assurance of an X.509 proof (core §3.5.1): an operator may rate the chains that end at some of
// its anchors higher (`high` for a qualified CA, say) than its other anchors.
import { type ParsedCertificate, parseTrustAnchors, type TrustAnchors } from './x509.js';
import { validateChain } from './x509-chain.js';
import type { CertificatePurpose } from './x509-extensions.js';

/** Anchors whose chains reach `level`; tiers are tried in the order given (the highest first). */
export interface AssuranceAnchors {
  readonly level: string;
  readonly anchors: TrustAnchors;
}

export interface ParsedAssuranceTier {
  readonly level: string;
  readonly anchors: readonly ParsedCertificate[];
}

/** Parses each tier's anchors once (a bad one throws, as the trust anchors do). */
export function parseAssuranceTiers(tiers: readonly AssuranceAnchors[] | undefined): readonly ParsedAssuranceTier[] {
  return (tiers ?? []).map((t) => ({ level: t.level, anchors: parseTrustAnchors(t.anchors) }));
}

/**
 * The level of the first tier `chain` also validates against, or undefined (the host's table for
 * the auth type then decides). Called after the chain validated against the trust anchors.
 */
export async function chainAssurance(
  chain: readonly ParsedCertificate[],
  tiers: readonly ParsedAssuranceTier[],
  now: number,
  purpose: CertificatePurpose,
): Promise<string | undefined> {
  for (const tier of tiers) {
    try {
      await validateChain(chain, tier.anchors, now, { purpose });
      return tier.level;
    } catch {
      // Not this tier's: the next one, or none.
    }
  }
  return undefined;
}
