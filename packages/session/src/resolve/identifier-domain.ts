/**
 * The host of an identifier with a domain (wmp-tables §5.4): `x509:san:dns:`, `x509:san:uri:`,
 * `https://`, `did:web:` (whose `%3A` is a port); undefined for the others (did:key, did:jwk).
 */
export function identifierDomain(identifier: string): string | undefined {
  const hostOfUrl = (text: string) => {
    try {
      const url = new URL(text);
      return url.protocol === 'https:' ? url.host : undefined;
    } catch {
      return undefined;
    }
  };
  if (identifier.startsWith('x509:san:dns:')) return identifier.slice('x509:san:dns:'.length) || undefined;
  if (identifier.startsWith('x509:san:uri:')) return hostOfUrl(identifier.slice('x509:san:uri:'.length));
  if (identifier.startsWith('https://')) return hostOfUrl(identifier);
  if (identifier.startsWith('did:web:')) {
    const host = identifier.slice('did:web:'.length).split(':')[0] ?? '';
    try {
      return host === '' ? undefined : decodeURIComponent(host);
    } catch {
      return undefined;
    }
  }
  return undefined;
}
