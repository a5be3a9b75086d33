import { didJwkKeyType, didKeyType } from '@wmp/jcs-signing';
import { BoundedSet } from '@wmp/jsonrpc-envelope';
import { didWebUrl, isDnsName } from './did-web.js';
import { schemeOf } from './schemes.js';

/** DID syntax (DID Core §3.1): `did:<method>:<method-specific-id>`, the id not ending in `:`. */
const DID = /^did:[a-z0-9]+:(?:(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})*:)*(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})+$/;
/** An absolute URI: a scheme, then no whitespace or control character. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}]+$/u;
const SHA256_HEX = /^[0-9A-Fa-f]{64}$/;

/** The check of a parser that throws: its problem when it does. */
function parses(parse: (identifier: string) => unknown, problem: string): (identifier: string) => string | undefined {
  return (identifier) => {
    try {
      parse(identifier);
      return undefined;
    } catch {
      return problem;
    }
  };
}

function isHttpsUrl(identifier: string): boolean {
  try {
    const url = new URL(identifier);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

const after = (identifier: string, prefix: string) => identifier.slice(prefix.length + 1);

/**
 * Per scheme (`schemeOf`), what makes an identifier of it well-formed; a scheme not listed here
 * (another DID method, `urn`, `mdoc`, `ebcore`, opaque ids) only has to pass the params schema.
 */
const CHECKS: Readonly<Record<string, (identifier: string) => string | undefined>> = {
  'did:key': parses(didKeyType, 'not a did:key public key'),
  'did:jwk': parses(didJwkKeyType, 'not a did:jwk public key'),
  'did:web': parses(didWebUrl, 'not a did:web'),
  'x509:san:dns': (id) => (isDnsName(after(id, 'x509:san:dns')) ? undefined : 'not a DNS name'),
  'x509:san:uri': (id) => (ABSOLUTE_URI.test(after(id, 'x509:san:uri')) ? undefined : 'not an absolute URI'),
  'x509:sha256': (id) => (SHA256_HEX.test(after(id, 'x509:sha256')) ? undefined : 'not a hex SHA-256'),
  'x509:dn': (id) => (after(id, 'x509:dn') !== '' ? undefined : 'empty distinguished name'),
  uri: (id) => (isHttpsUrl(id) ? undefined : 'not an https URL'),
};

/** Identifiers found well-formed, so that a relay checks each recipient it sees often once. */
const WELL_FORMED = new BoundedSet<string>(16_384);

/**
 * Why an identifier that names another party (a recipient, a listed participant) is malformed, by
 * its scheme: a did:key must decode to a signing key, a did:jwk hold a public JWK, a did:web name a
 * document URL, an `x509:` id carry a DNS name, URI or fingerprint, an `https://` id be an https
 * URL, any other `did:` follow DID syntax; undefined when it is well-formed, or of a scheme with no
 * rule here. Cheap for an identifier seen before (a bounded cache of well-formed ones).
 */
export function identifierProblem(identifier: string): string | undefined {
  if (WELL_FORMED.has(identifier)) return undefined;
  const scheme = schemeOf(identifier);
  const check = Object.hasOwn(CHECKS, scheme) ? CHECKS[scheme] : undefined;
  let problem: string | undefined;
  if (check !== undefined) problem = check(identifier);
  else if (identifier.startsWith('did:') && !DID.test(identifier)) problem = 'not a DID';
  if (problem === undefined) WELL_FORMED.add(identifier);
  return problem;
}
