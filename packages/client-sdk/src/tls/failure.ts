// Why a TLS handshake failed, read from the error codes Node's TLS layer puts on the errors along a
// failure's `cause` chain (OpenSSL's verification results and alerts). Browser-safe: in browsers
// a TLS failure is an opaque network error, and this finds nothing.

/** What went wrong, in the terms a user can act on. */
export type TlsFailureKind =
  /** The relay's certificate (or one in its chain) is self-signed and not trusted here. */
  | 'self_signed'
  /** The relay's certificate was issued by a CA that is not trusted here (a private CA?). */
  | 'unknown_ca'
  /** The certificate is for another host name than the one connected to. */
  | 'hostname_mismatch'
  /** The certificate has expired. */
  | 'expired'
  /** The certificate is not valid yet. */
  | 'not_yet_valid'
  /** The certificate was revoked. */
  | 'revoked'
  /** The relay asks for a client certificate and none was given. */
  | 'client_certificate_required'
  /** The relay refused the client certificate given. */
  | 'client_certificate_refused'
  /** Not TLS at the other end (an `https://` URL to a plain-HTTP port, say). */
  | 'not_tls'
  /** Another certificate or handshake failure. */
  | 'handshake';

export interface TlsFailure {
  readonly kind: TlsFailureKind;
  /** Node's or OpenSSL's code (`SELF_SIGNED_CERT_IN_CHAIN`, `ERR_TLS_CERT_ALTNAME_INVALID`, ...). */
  readonly code: string;
}

const BY_CODE: Readonly<Record<string, TlsFailureKind>> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self_signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'self_signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unknown_ca',
  UNABLE_TO_GET_ISSUER_CERT: 'unknown_ca',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unknown_ca',
  CERT_UNTRUSTED: 'unknown_ca',
  ERR_TLS_CERT_ALTNAME_INVALID: 'hostname_mismatch',
  HOSTNAME_MISMATCH: 'hostname_mismatch',
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not_yet_valid',
  CERT_REVOKED: 'revoked',
  CERT_SIGNATURE_FAILURE: 'handshake',
  CERT_REJECTED: 'handshake',
  INVALID_CA: 'handshake',
  INVALID_PURPOSE: 'handshake',
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: 'client_certificate_required',
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: 'handshake',
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: 'client_certificate_refused',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'client_certificate_refused',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN: 'client_certificate_refused',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: 'client_certificate_refused',
  ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR: 'client_certificate_refused',
  ERR_SSL_WRONG_VERSION_NUMBER: 'not_tls',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'not_tls',
};

/** How far along `cause` to look (fetch, the transports and the SDK each wrap once). */
const MAX_DEPTH = 6;

/** The TLS failure behind `error` (looking along its `cause` chain), or undefined when it is not one. */
export function tlsFailureOf(error: unknown): TlsFailure | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      const kind = BY_CODE[code];
      if (kind !== undefined) return { kind, code };
      if (/^ERR_SSL_/.test(code)) return { kind: 'handshake', code };
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
