/**
 * An RFC 3339 UTC time with whole seconds and `Z` (`2026-11-29T12:00:00Z`): the form WMP
 * timestamps and OHAN times are written in (docs/ohan-profile.md, "Encodings"). Milliseconds are
 * dropped, not rounded.
 */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}
