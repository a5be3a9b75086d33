// The relay's authentication and TLS settings (issue 16): which files hold trust anchors and TLS
// material, and how did:web documents are fetched. Pure like config.ts: files are read at start.
import type { OptionSpec } from './config-spec.js';

/** Authentication and TLS, as the flags gave them (paths as given; the caller resolves them). */
export interface AuthSettings {
  /** PEM bundle of CAs x5c senders must chain to (enables `x5c`). */
  readonly trustAnchorsFile: string | undefined;
  /** PEM certificate chain and key: the relay serves HTTPS and WSS itself (TLS 1.3). */
  readonly tlsCertFile: string | undefined;
  readonly tlsKeyFile: string | undefined;
  /** PEM bundle of CAs client certificates are asked for (enables `mtls`). */
  readonly tlsClientCaFile: string | undefined;
  /** did:web senders by signed challenge. */
  readonly didWeb: boolean;
  /**
   * WEAKER (closed deployments, tests): did:web documents may be fetched from private and loopback
   * addresses. Set by `--allow-private-peers`, the one flag for every fetch on a client's behalf.
   */
  readonly allowPrivatePeers: boolean;
  readonly didWebTimeoutMs: number | undefined;
  readonly didWebMaxBytes: number | undefined;
}

export const AUTH_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'trust-anchors',
    kind: 'string',
    help: 'PEM file of CAs that x509:* senders chain to (x5c authentication on)',
    default: 'none',
  },
  { flag: 'tls-cert', kind: 'string', help: 'PEM certificate chain: serve HTTPS and WSS (TLS 1.3)', default: 'none' },
  { flag: 'tls-key', kind: 'string', help: 'PEM private key of --tls-cert', default: 'none' },
  {
    flag: 'tls-client-ca',
    kind: 'string',
    help: 'PEM file of CAs to ask client certificates of (mtls authentication on; needs --tls-cert)',
    default: 'none',
  },
  {
    flag: 'did-web',
    kind: 'bool',
    help: 'authenticate did:web senders (documents fetched over HTTPS)',
    default: 'off',
  },
  {
    flag: 'did-web-timeout',
    kind: 'seconds',
    help: 'seconds one did:web fetch may take',
    default: '5',
    min: 1,
    max: 60,
  },
  {
    flag: 'did-web-max-bytes',
    kind: 'bytes',
    help: 'largest did:web document',
    default: '65536',
    min: 1024,
    max: 1024 * 1024,
  },
];

/** How config.ts reads one option: its text (flag or variable), a boolean, a number. */
export interface OptionReader {
  text(flag: string): string | undefined;
  bool(flag: string): boolean | undefined;
  number(flag: string): number | undefined;
}

/** The settings, with the combinations that cannot work refused (the message names the flags). */
export function authSettings(read: OptionReader, fail: (message: string) => never): AuthSettings {
  const nonEmpty = (flag: string) => {
    const v = read.text(flag);
    if (v !== undefined && v.trim() === '') fail(`--${flag}: must not be empty`);
    return v;
  };
  const settings: AuthSettings = {
    trustAnchorsFile: nonEmpty('trust-anchors'),
    tlsCertFile: nonEmpty('tls-cert'),
    tlsKeyFile: nonEmpty('tls-key'),
    tlsClientCaFile: nonEmpty('tls-client-ca'),
    didWeb: read.bool('did-web') ?? false,
    allowPrivatePeers: read.bool('allow-private-peers') ?? false,
    didWebTimeoutMs: mapDefined(read.number('did-web-timeout'), (s) => s * 1000),
    didWebMaxBytes: read.number('did-web-max-bytes'),
  };
  if ((settings.tlsCertFile === undefined) !== (settings.tlsKeyFile === undefined)) {
    fail('--tls-cert and --tls-key go together');
  }
  if (settings.tlsClientCaFile !== undefined && settings.tlsCertFile === undefined) {
    fail('--tls-client-ca needs --tls-cert and --tls-key (client certificates are asked for in the TLS handshake)');
  }
  return settings;
}

function mapDefined<T, U>(v: T | undefined, f: (v: T) => U): U | undefined {
  return v === undefined ? undefined : f(v);
}
