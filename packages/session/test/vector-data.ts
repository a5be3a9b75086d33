// The WMP spec vectors (vectors/wmp/vectors) as data, with the helpers every vector runner shares.
// No project code here: the relay's runner (apps/relay) imports this next to a spec-only client.
import { readFileSync } from 'node:fs';

export interface Vector {
  readonly id: string;
  readonly input: any;
  readonly expected_response?: any;
  readonly expected_error?: any;
  readonly handler_action?: { method: string; return?: any; error?: any };
  readonly peer_options?: { authorize?: boolean; validate?: boolean };
}

export const VECTOR_FILES = [
  'session-create.json',
  'session-lifecycle.json',
  'message-deliver.json',
  'resolve.json',
  'errors.json',
  'flow-lifecycle.json',
  'interop.json',
] as const;

const dir = new URL('../../../vectors/wmp/vectors/', import.meta.url);
export const loadVectors = (file: string): Vector[] => JSON.parse(readFileSync(new URL(file, dir), 'utf8'));

/** Every identity the vectors name (x509 and did:web examples nobody can sign for). */
export const VECTOR_IDENTITIES = [
  'x509:san:dns:alice.example.com',
  'x509:san:dns:bob.example.com',
  'x509:san:dns:carol.example.com',
  'x509:san:dns:dave.example.com',
  'did:web:issuer.example.com',
] as const;
export const ALICE = VECTOR_IDENTITIES[0];
export const BOB = VECTOR_IDENTITIES[1];

/** `ses-*`, `ch-*` and `*` are the vectors' wildcards; objects match when every expected member does. */
export function matches(expected: unknown, actual: unknown, exact: boolean): boolean {
  if (expected === 'ses-*') return typeof actual === 'string' && /^ses-[A-Za-z0-9]+$/.test(actual);
  if (expected === 'ch-*') return typeof actual === 'string' && actual.startsWith('ch-');
  if (expected === '*') return actual !== undefined;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => matches(e, actual[i], exact))
    );
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') return false;
    const keys = Object.keys(expected);
    if (exact && Object.keys(actual).length !== keys.length) return false;
    return keys.every((k) => matches((expected as any)[k], (actual as any)[k], exact));
  }
  return expected === actual;
}

/** Replaces every JSON string that is exactly `from` (a session id, an identity) by `to`. */
export function substitute<T>(value: T, from: string, to: string): T {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value).split(JSON.stringify(from)).join(JSON.stringify(to)));
}

/** `substitute` for every pair of `map`. */
export function substituteAll<T>(value: T, map: ReadonlyMap<string, string>): T {
  let out = value;
  for (const [from, to] of map) out = substitute(out, from, to);
  return out;
}

/** The vectors' example timestamps are from their writing: sent as now (core §8.5.1 holds senders to 30 s). */
export function withCurrentTimestamps<T>(message: T): T {
  const copy = structuredClone(message) as any;
  for (const m of Array.isArray(copy) ? copy : [copy]) {
    if (typeof m?.params?.wmp?.timestamp === 'string') m.params.wmp.timestamp = new Date().toISOString();
  }
  return copy;
}

/** True for an RFC 3339 date-time with a time zone (what the vectors' example times are). */
export const isRfc3339 = (value: unknown): boolean =>
  typeof value === 'string' &&
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
  !Number.isNaN(Date.parse(value));
