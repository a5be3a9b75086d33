// Reads the files the authentication and TLS flags name and makes the relay's TLS settings and
// authenticators from them. A file that cannot be read or holds no usable PEM stops the start.
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { type RelayConfig, type RelayTlsConfig, relayAuthenticators } from '@wmp/relay-server/node';
import type { AuthSettings } from './auth-config.js';
import { RelayAppError } from './errors.js';

/** A start failure caused by one of the authentication flags (exit 2, naming the flag). */
export class AuthFileError extends RelayAppError {
  declare readonly code: 'ERR_AUTH_FILE';
  constructor(
    readonly flag: string,
    readonly problem: 'unreadable' | 'not_pem' | 'bad_certificates',
  ) {
    super('ERR_AUTH_FILE', `--${flag}: ${AUTH_FILE_PROBLEMS[problem]}`);
    this.name = 'AuthFileError';
  }
}

const AUTH_FILE_PROBLEMS: Readonly<Record<AuthFileError['problem'], string>> = {
  unreadable: 'cannot read the file',
  not_pem: 'the file holds no PEM block',
  bad_certificates: 'the file holds no valid certificate',
};

function readPem(flag: string, path: string, cwd: string): string {
  let text: string;
  try {
    text = readFileSync(isAbsolute(path) ? path : resolve(cwd, path), 'utf8');
  } catch {
    throw new AuthFileError(flag, 'unreadable');
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) throw new AuthFileError(flag, 'not_pem');
  return text;
}

/** A flag's PEM file, read (undefined when the flag is not given); `AuthFileError` otherwise. */
export function readPemFlag(flag: string, path: string | undefined, cwd: string): string | undefined {
  return path === undefined ? undefined : readPem(flag, path, cwd);
}

/**
 * The relay's `tls` and `authenticators` for these settings (nothing configured: neither); with
 * `highAssurance` (a PEM bundle, `--high-assurance-anchors`), x5c and mtls chains ending at one
 * of its anchors authenticate at `high`.
 */
export async function loadAuth(
  settings: AuthSettings | undefined,
  cwd: string,
  highAssurance?: string,
): Promise<Pick<RelayConfig, 'tls' | 'authenticators'>> {
  if (settings === undefined) return {};
  const pem = (flag: string, path: string | undefined) => readPemFlag(flag, path, cwd);
  const trustAnchors = pem('trust-anchors', settings.trustAnchorsFile);
  const clientCa = pem('tls-client-ca', settings.tlsClientCaFile);
  const cert = pem('tls-cert', settings.tlsCertFile);
  const key = pem('tls-key', settings.tlsKeyFile);
  const tls: RelayTlsConfig | undefined =
    cert === undefined || key === undefined ? undefined : { cert, key, ...(clientCa ? { clientCa } : {}) };
  if (trustAnchors === undefined && clientCa === undefined && !settings.didWeb) return tls ? { tls } : {};
  // Each bundle on its own first, so that a refusal names its flag (pkijs parses them here).
  for (const [flag, anchors] of [
    ['trust-anchors', trustAnchors],
    ['tls-client-ca', clientCa],
    ['high-assurance-anchors', highAssurance],
  ] as const) {
    if (anchors !== undefined) await checkAnchors(flag, anchors);
  }
  const authenticators = await relayAuthenticators({
    ...(trustAnchors ? { trustAnchors } : {}),
    ...(clientCa ? { clientCa } : {}),
    ...(highAssurance ? { assuranceAnchors: [{ level: 'high', anchors: highAssurance }] } : {}),
    ...(settings.didWeb
      ? {
          didWeb: {
            allowPrivateAddresses: settings.allowPrivatePeers,
            ...(settings.didWebTimeoutMs === undefined ? {} : { timeoutMs: settings.didWebTimeoutMs }),
            ...(settings.didWebMaxBytes === undefined ? {} : { maxBytes: settings.didWebMaxBytes }),
          },
        }
      : {}),
  });
  return { ...(tls ? { tls } : {}), authenticators };
}

async function checkAnchors(flag: string, trustAnchors: string): Promise<void> {
  try {
    await relayAuthenticators({ trustAnchors });
  } catch (e) {
    if ((e as Error)?.name === 'CertificateParseError') throw new AuthFileError(flag, 'bad_certificates');
    throw e;
  }
}
