// Recipient assurance (core §3.5.1, wmp-tables §3.3): each way of authenticating reaches a level
// of the eIDAS vocabulary; a recipient below a message's `recipient_assurance_level` never gets
// its content. The table is the operator's (`RegisteredDeliveryConfig.assurance`).
import type { SessionRecord } from '@wmp/session';

/** The levels, lowest first. */
export const ASSURANCE_LEVELS = ['low', 'substantial', 'high'] as const;
export type AssuranceLevel = (typeof ASSURANCE_LEVELS)[number];

/** Auth type -> level: a did:key proves control of a key, a certificate chained to an anchor of the operator more. */
export const DEFAULT_ASSURANCE: Readonly<Record<string, AssuranceLevel>> = Object.freeze({
  signed_challenge: 'low',
  bearer: 'low',
  dpop: 'low',
  x5c: 'substantial',
  mtls: 'substantial',
});

export function isAssuranceLevel(level: unknown): level is AssuranceLevel {
  return typeof level === 'string' && (ASSURANCE_LEVELS as readonly string[]).includes(level);
}

/** Whether `have` is at or above `want`. */
export function meetsAssurance(have: AssuranceLevel, want: AssuranceLevel): boolean {
  return ASSURANCE_LEVELS.indexOf(have) >= ASSURANCE_LEVELS.indexOf(want);
}

/**
 * The level `identity` authenticated at on `session`: what its authenticator vouched for (an x5c
 * chain to an anchor rated `high`), else the table's for its auth type, else `low`.
 */
export function assuranceOf(
  session: SessionRecord,
  identity: string,
  table: Readonly<Record<string, AssuranceLevel>>,
): AssuranceLevel {
  const how = session.authenticatedWith?.[identity];
  if (how === undefined) return 'low';
  if (isAssuranceLevel(how.assurance)) return how.assurance;
  return table[how.type] ?? 'low';
}

/** The levels a table can reach (what the well-known `erds.assurance_levels` lists), lowest first. */
export function reachableLevels(table: Readonly<Record<string, AssuranceLevel>>, extra: readonly string[]): string[] {
  const reached = new Set<string>([...Object.values(table), ...extra.filter(isAssuranceLevel)]);
  return ASSURANCE_LEVELS.filter((l) => reached.has(l));
}
