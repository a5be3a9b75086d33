import type { ServerOptions } from 'node:https';

/** TLS the relay terminates itself (HTTPS and WSS on its one port). PEM text or buffers. */
export interface RelayTlsConfig {
  /** The server certificate chain, leaf first. */
  readonly cert: string | Uint8Array;
  readonly key: string | Uint8Array;
  /**
   * The CAs client certificates are asked for (mtls): clients may present one, and one that
   * chains to these authenticates an `x509:*` sender inline at create. Connecting without one
   * still works (for every other auth type).
   */
  readonly clientCa?: string | Uint8Array;
}

/**
 * Node's HTTPS options for `tls`: TLS 1.3 only. A client certificate is asked for, never required
 * (`rejectUnauthorized: false`): the `mtls` authenticator checks the chain and says why it refuses.
 */
export function tlsServerOptions(tls: RelayTlsConfig): ServerOptions {
  const buffer = (v: string | Uint8Array) => (typeof v === 'string' ? v : Buffer.from(v));
  return {
    cert: buffer(tls.cert),
    key: buffer(tls.key),
    minVersion: 'TLSv1.3',
    ...(tls.clientCa === undefined ? {} : { ca: buffer(tls.clientCa), requestCert: true, rejectUnauthorized: false }),
  };
}
