import { ipLiteralOf, isLoopbackAddress, isPrivateAddress } from '@wmp/jsonrpc-envelope';
import { OutboundFetchError } from './outbound-errors.js';

/** What the guarded fetcher may reach (docs/federation-profile.md, "Fetching on a client's behalf"). */
export interface OutboundRules {
  /**
   * Private, loopback, link-local and unique-local addresses may be reached, and plain http on
   * loopback (closed deployments and tests: `--allow-private-peers`). Default false.
   */
  readonly allowPrivate: boolean;
  /** Origins the operator configured (`--peer`, `--peer-trust`, `--route`): reached as given. */
  readonly trusted: (origin: string) => boolean;
}

/** The `http(s)` origin of a URL (`ws:` read as `http:`, `wss:` as `https:`), or undefined. */
export function httpOriginOf(url: URL): string | undefined {
  const scheme = { 'http:': 'http:', 'https:': 'https:', 'ws:': 'http:', 'wss:': 'https:' }[url.protocol];
  return scheme === undefined ? undefined : `${scheme}//${url.host}`;
}

/**
 * Checks a URL before anything is resolved: `trusted` for an origin the operator configured,
 * `guarded` for one whose address is checked when connecting; throws `not_allowed` for anything
 * else (another scheme, credentials, plain http unless private peers are allowed).
 */
export function classifyUrl(url: URL, rules: OutboundRules): 'trusted' | 'guarded' {
  const origin = httpOriginOf(url);
  if (origin === undefined || url.username !== '' || url.password !== '') throw new OutboundFetchError('not_allowed');
  if (rules.trusted(origin)) return 'trusted';
  if (origin.startsWith('http:') && !rules.allowPrivate) throw new OutboundFetchError('not_allowed');
  return 'guarded';
}

/**
 * Whether a guarded connection may go to `address` (one DNS answered, or the URL's own): a
 * public one, or with private peers allowed any; plain http only to loopback.
 */
export function addressAllowed(address: string, secure: boolean, rules: OutboundRules): boolean {
  if (!secure && !isLoopbackAddress(address)) return false;
  return rules.allowPrivate || !isPrivateAddress(address);
}

/** The address a host names when it is an IP literal (brackets dropped), else undefined. */
export function literalAddressOf(hostname: string): string | undefined {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipLiteralOf(host) === undefined ? undefined : host;
}
