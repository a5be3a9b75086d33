// `--assertion-policy FILE`: the operator's identity-assertion policy (core §5.6) as JSON, read
// and checked at start (a bad file stops the start, exit 2, naming the flag):
//   { "formats": ["vc+sd-jwt"], "required_claims": ["given_name"],
//     "trusted_issuers": ["did:key:z6Mk...", "https://issuer.example", "issuer-cas.pem"],
//     "trust_frameworks": ["x509_pki"], "required": true }
// A trusted issuer is a DID, an https issuer identifier (keys from its metadata), or a PEM file of
// CA certificates that issuers' x5c chains must reach (relative to the policy file).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { AssertionChecker, DocumentFetch } from '@wmp/session';
import { type AssertionPolicy, SD_JWT_FORMATS, sdJwtAssertionChecker } from '@wmp/session/sd-jwt';
import { parseTrustAnchors } from '@wmp/session/x509';

/** A policy file that cannot be used; the message names the flag and the problem, never the content. */
export class AssertionPolicyError extends Error {
  readonly code = 'ERR_ASSERTION_POLICY';
  constructor(problem: string) {
    super(`--assertion-policy: ${problem}`);
    this.name = 'AssertionPolicyError';
  }
}

const KEYS = new Set(['formats', 'required_claims', 'trusted_issuers', 'trust_frameworks', 'required']);
const MAX_FILE_BYTES = 1024 * 1024;

function read(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new AssertionPolicyError(`cannot read ${path}`);
  }
  if (text.length > MAX_FILE_BYTES) throw new AssertionPolicyError(`${path} is too large`);
  return text;
}

function strings(value: unknown, key: string, nonEmpty: boolean): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.some((v) => typeof v !== 'string' || v === '') ||
    (nonEmpty && value.length === 0)
  ) {
    throw new AssertionPolicyError(`"${key}" must be a list of non-empty strings`);
  }
  return value as string[];
}

/** The policy of the file at `path` (relative to `cwd`), its PEM files read and checked. */
export function readAssertionPolicy(path: string, cwd: string): AssertionPolicy {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  let json: unknown;
  try {
    json = JSON.parse(read(file));
  } catch (e) {
    if (e instanceof AssertionPolicyError) throw e;
    throw new AssertionPolicyError('the file is not JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new AssertionPolicyError('the file must hold a JSON object');
  }
  const o = json as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => !KEYS.has(k));
  if (unknown !== undefined) throw new AssertionPolicyError(`unknown member "${unknown}"`);
  const formats = strings(o.formats, 'formats', true);
  const unsupported = formats?.find((f) => !SD_JWT_FORMATS.includes(f));
  if (unsupported !== undefined)
    throw new AssertionPolicyError(`format "${unsupported}" is not one this relay verifies`);
  if (o.required !== undefined && typeof o.required !== 'boolean') {
    throw new AssertionPolicyError('"required" must be true or false');
  }
  const issuers: string[] = [];
  const anchors: string[] = [];
  for (const entry of strings(o.trusted_issuers, 'trusted_issuers', true) ?? []) {
    if (entry.startsWith('did:') || entry.startsWith('https://')) {
      issuers.push(entry);
      continue;
    }
    const pemFile = isAbsolute(entry) ? entry : resolve(dirname(file), entry);
    const pem = read(pemFile);
    try {
      parseTrustAnchors(pem);
    } catch {
      throw new AssertionPolicyError(`${entry} holds no valid CA certificate`);
    }
    anchors.push(pem);
  }
  if (issuers.length === 0 && anchors.length === 0) {
    throw new AssertionPolicyError('"trusted_issuers" names no issuer (DIDs, https issuers or PEM files)');
  }
  const requiredClaims = strings(o.required_claims, 'required_claims', false);
  const trustFrameworks = strings(o.trust_frameworks, 'trust_frameworks', false);
  return {
    ...(formats ? { formats } : {}),
    ...(requiredClaims ? { requiredClaims } : {}),
    trustedIssuers: issuers,
    ...(anchors.length > 0 ? { trustAnchors: anchors } : {}),
    ...(trustFrameworks ? { trustFrameworks } : {}),
    ...(o.required === undefined ? {} : { required: o.required as boolean }),
  };
}

/**
 * The relay's checker for the policy file. `fetch` (the guarded fetcher) is what https issuers'
 * keys and status lists are fetched with; without it they are refused (`untrusted_issuer`,
 * `invalid_proof`), and DIDs and PEM anchors still work.
 */
export function loadAssertionPolicy(path: string, cwd: string, fetch: DocumentFetch | undefined): AssertionChecker {
  return sdJwtAssertionChecker(readAssertionPolicy(path, cwd), fetch ? { fetch } : {});
}
