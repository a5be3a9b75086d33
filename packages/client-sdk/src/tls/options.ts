// TLS material for connections made from Node: a private CA to trust, and a client certificate
// for mTLS. Browsers take neither (the platform's trust store and certificate picker decide), so
// the browser-safe entry refuses them; `@wmp/client-sdk/node` turns them into a fetch and a
// WebSocket that use them.

/** PEM text for TLS connections (Node only: see `@wmp/client-sdk/node`). */
export interface TlsOptions {
  /** CA certificates to trust, besides Node's own roots (a private CA). */
  readonly ca?: string;
  /** A client certificate chain (leaf first) to present when the relay asks for one (mTLS); with `key`. */
  readonly cert?: string;
  /** The PKCS#8 private key of `cert`'s leaf. */
  readonly key?: string;
}

/** Whether any TLS option is set (an empty object asks for nothing). */
export function hasTlsOptions(tls: TlsOptions | undefined): tls is TlsOptions {
  return tls !== undefined && (tls.ca !== undefined || tls.cert !== undefined || tls.key !== undefined);
}
