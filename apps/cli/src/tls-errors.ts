// TLS failures (the SDK's `tlsFailureOf` classes) as CLI errors: exit 5, the class in words and
// Node's code, and what to do. Never retried: the next attempt fails the same way.
import type { TlsFailure, TlsFailureKind } from '@wmp/client-sdk';
import { TlsError } from './errors.js';

const CA_HINT = 'If the relay uses a private CA, trust it: --ca-file <ca.pem> (or WMP_CA_FILE).';

/** Each TLS failure in words, and what to do about it. */
const TLS: Readonly<Record<TlsFailureKind, { text: string; hint: string }>> = {
  self_signed: { text: "the relay's certificate is self-signed (not trusted here)", hint: CA_HINT },
  unknown_ca: { text: "the relay's certificate is issued by an unknown CA", hint: CA_HINT },
  hostname_mismatch: {
    text: "the relay's certificate is for another host name",
    hint: 'Use the host name the certificate names in the URL (or ask the operator for a certificate for this one).',
  },
  expired: { text: "the relay's certificate has expired", hint: 'Tell the relay operator.' },
  not_yet_valid: {
    text: "the relay's certificate is not valid yet",
    hint: 'Check that your clock is right; else tell the relay operator.',
  },
  revoked: { text: "the relay's certificate was revoked", hint: 'Tell the relay operator.' },
  client_certificate_required: {
    text: 'the relay asks for a client certificate (mTLS) and none was given',
    hint: 'Give one: --client-cert <chain.pem> --client-key <key.pem> (or import it: wmp keys import --cert --key).',
  },
  client_certificate_refused: {
    text: 'the relay refused the client certificate',
    hint: 'Check that it chains to a CA the relay trusts for clients (its --tls-client-ca) and has not expired.',
  },
  not_tls: {
    text: 'the relay does not speak TLS on this port',
    hint: 'Check the URL: http:// for a relay without TLS, https:// only where it serves TLS.',
  },
  handshake: { text: 'the TLS handshake failed', hint: `Check the URL and the certificates. ${CA_HINT}` },
};

/** A TLS failure with `where` (a relay origin) as a CLI error: exit 5, the kind and Node's code. */
export function tlsCliError(failure: TlsFailure, where: string | undefined): TlsError {
  const entry = TLS[failure.kind];
  return new TlsError(`TLS failed${where ? ` with ${where}` : ''}: ${entry.text} (${failure.code})`, entry.hint, {
    tls: failure.kind,
    tls_code: failure.code,
    ...(where ? { relay: where } : {}),
  });
}
