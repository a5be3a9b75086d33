import type { TLSSocket } from 'node:tls';

/** More than any chain an authenticator takes (it refuses long ones as `chain_too_long`). */
const MAX_PEER_CERTIFICATES = 16;

/**
 * The certificate chain (DER, leaf first) the peer of a TLS socket presented, or undefined on a
 * plain socket or when it presented none. Not only chains Node accepted: the handshake proved
 * the peer holds the leaf's key either way, and whether the chain is trusted is for the
 * authenticator to decide (with its own reasons). Node appends the issuers it found, which may
 * include the local CA that verified it; the walk stops at a self-issued certificate.
 */
export function tlsPeerCertificates(socket: unknown): readonly Uint8Array[] | undefined {
  const tls = socket as Partial<Pick<TLSSocket, 'encrypted' | 'getPeerCertificate'>> | undefined;
  if (tls?.encrypted !== true || typeof tls.getPeerCertificate !== 'function') return undefined;
  let cert = tls.getPeerCertificate(true);
  if (cert === null || cert === undefined || !cert.raw) return undefined;
  const chain: Uint8Array[] = [];
  while (cert?.raw && chain.length < MAX_PEER_CERTIFICATES) {
    chain.push(new Uint8Array(cert.raw));
    const issuer = cert.issuerCertificate;
    if (issuer === undefined || issuer === cert || issuer.raw?.equals(cert.raw)) break;
    cert = issuer;
  }
  return chain;
}
