import type { Authenticator } from './authenticator.js';
import { authFailure } from './reasons.js';

/**
 * The identifier scheme of an identifier (core §7.1, wmp-tables §5.3), as precise as its prefix
 * says: `did:<method>`, `x509:san:dns`, `x509:san:uri`, `x509:sha256`, `x509:dn`, `uri` (every
 * `https://` id), `mdoc`, `urn`, `ebcore`, else `opaque`.
 */
export function schemeOf(identifier: string): string {
  if (identifier.startsWith('https://')) return 'uri';
  if (identifier.startsWith('did:')) {
    const end = identifier.indexOf(':', 4);
    return end > 4 ? identifier.slice(0, end) : 'opaque';
  }
  for (const prefix of ['x509:san:dns', 'x509:san:uri', 'x509:sha256', 'x509:dn']) {
    if (identifier.startsWith(`${prefix}:`)) return prefix;
  }
  for (const prefix of ['mdoc', 'urn', 'ebcore']) {
    if (identifier.startsWith(`${prefix}:`)) return prefix;
  }
  return 'opaque';
}

/**
 * Whether an `accepted_schemes` entry covers an identifier: the entry is its scheme or a
 * coarser name of it (`did` covers `did:web`, `x509` covers `x509:san:dns`), so the spec's
 * coarse names (`did`, `x509`, `uri`) and our precise ones are read the same way.
 */
export function schemeCovers(entry: string, identifier: string): boolean {
  const scheme = schemeOf(identifier);
  return scheme === entry || scheme.startsWith(`${entry}:`);
}

type Authenticators = ReadonlyMap<string, Authenticator> | Readonly<Record<string, Authenticator>>;

function entriesOf(authenticators: Authenticators): Array<[string, Authenticator]> {
  return authenticators instanceof Map
    ? [...authenticators.entries()]
    : Object.entries(authenticators as Readonly<Record<string, Authenticator>>);
}

/**
 * The well-known `accepted_schemes` (core §7.4, §7.5.1): exactly the schemes the configured
 * authenticators declare, sorted. An authenticator that declares none (a custom one that
 * decides by itself) adds nothing.
 */
export function acceptedSchemes(authenticators: Authenticators): string[] {
  const all = new Set<string>();
  for (const [, a] of entriesOf(authenticators)) for (const s of a.schemes ?? []) all.add(s);
  return [...all].sort();
}

/**
 * The scheme families of `schemes` (the part before the first `:`: `did:key` is `did`,
 * `x509:san:dns` is `x509`, `uri` stays `uri`), sorted and once each: what the spec's examples
 * put in the well-known `accepted_schemes` and what clients match (`includes("x509")`).
 */
export function schemeFamilies(schemes: readonly string[]): string[] {
  return [...new Set(schemes.map((s) => s.split(':', 1)[0]!))].sort();
}

/**
 * Refuses (-31002 `unsupported_scheme`) a sender whose scheme no authenticator proves; with
 * `authType`, the authenticator of that type must prove it. Authenticators that declare no
 * schemes accept any. An absent sender is left to the authenticator.
 */
export function checkSenderScheme(authenticators: Authenticators, sender: string | undefined, authType?: string): void {
  if (sender === undefined) return;
  const serves = (a: Authenticator | undefined) =>
    a !== undefined && (a.schemes === undefined || a.schemes.some((entry) => schemeCovers(entry, sender)));
  const chosen = authType === undefined ? undefined : entriesOf(authenticators).find(([t]) => t === authType)?.[1];
  if (chosen !== undefined) {
    if (!serves(chosen)) throw authFailure('unsupported_scheme');
    return;
  }
  if (!entriesOf(authenticators).some(([, a]) => serves(a))) throw authFailure('unsupported_scheme');
}
