// The checks of single values and groups of options (byte sizes, booleans, hosts, origins, the
// cluster's URLs, the relay key, federation lists): each refusal a ConfigError naming the flag or
// variable. Pure.
import { isIP } from 'node:net';
import { isBoxOrigin } from '@wmp/ohan-seal';
import { type FederationConfig, type FederationMode, parseRoute } from '@wmp/relay-server';
import { envOf, MiB, OPTIONS } from './config-options.js';
import type { OptionSpec } from './config-spec.js';
import type { ClusterSettings, RelayKeySource } from './config-types.js';
import { RelayAppError } from './errors.js';

/** A setting that cannot be used (exit 2): the message names the flag or variable. */
export class ConfigError extends RelayAppError {
  declare readonly code: 'ERR_CONFIG';
  constructor(message: string) {
    super('ERR_CONFIG', message);
    this.name = 'ConfigError';
  }
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: MiB,
  mb: MiB,
  mib: MiB,
  g: 1024 * MiB,
  gb: 1024 * MiB,
  gib: 1024 * MiB,
};

function where(spec: OptionSpec, fromEnv: boolean): string {
  return fromEnv ? `${envOf(spec)}` : `--${spec.flag}`;
}

export function parseInteger(spec: OptionSpec, text: string, fromEnv: boolean): number {
  let value: number;
  if (spec.kind === 'bytes') {
    // A count of bytes, with an optional binary unit: 1048576, 1MiB, 1m, 512k, 1GiB.
    const m = /^(\d+)\s*([a-zA-Z]*)$/.exec(text.trim());
    const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    if (!m || unit === undefined) {
      throw new ConfigError(
        `${where(spec, fromEnv)}: "${text}" is not a byte size (e.g. 1048576, 512KiB, 16MiB, 1GiB)`,
      );
    }
    value = Number(m[1]) * unit;
  } else {
    if (!/^\d+$/.test(text.trim())) throw new ConfigError(`${where(spec, fromEnv)}: "${text}" is not an integer >= 0`);
    value = Number(text.trim());
  }
  const min = spec.min ?? 0;
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = spec.max === undefined ? `>= ${min}` : `${min}..${max}`;
    throw new ConfigError(`${where(spec, fromEnv)}: ${text} is out of range (${range})`);
  }
  return value;
}

export function parseBool(spec: OptionSpec, text: string): boolean {
  const t = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  throw new ConfigError(`${envOf(spec)}: "${text}" is not a boolean (1/0, true/false, yes/no, on/off)`);
}

/** A host name or an IP address to bind to. */
export function checkHost(text: string, fromEnv: boolean): string {
  const ok =
    isIP(text) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*$/.test(text);
  if (!ok) throw new ConfigError(`${fromEnv ? 'WMP_HOST' : '--host'}: "${text}" is not a host name or IP address`);
  return text;
}

export function checkPublicUrl(text: string, fromEnv: boolean): string {
  const origin = text.replace(/\/+$/, '');
  if (!isBoxOrigin(origin)) {
    throw new ConfigError(
      `${fromEnv ? 'WMP_PUBLIC_URL' : '--public-url'}: "${text}" is not an origin like https://relay.example ` +
        '(scheme, host and port only; http:// only on loopback)',
    );
  }
  return origin;
}

/** A node id: short, and safe in a log line, a metric label and a Redis client name. */
export const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

export type Raw = { text: string; fromEnv: boolean } | undefined;

/** The protocol of a URL, or undefined; the URL itself is never put in a message (it may hold a password). */
function protocolOf(text: string): string | undefined {
  try {
    return new URL(text).protocol;
  } catch {
    return undefined;
  }
}

export function clusterSettings(database: Raw, redis: Raw): ClusterSettings | undefined {
  if (database === undefined && redis === undefined) return undefined;
  if (database === undefined) throw new ConfigError('--redis-url: only a cluster uses Redis: give --database-url too');
  if (redis === undefined) throw new ConfigError('--database-url: a cluster needs --redis-url (or WMP_REDIS_URL) too');
  const dbProtocol = protocolOf(database.text);
  if (dbProtocol !== 'postgres:' && dbProtocol !== 'postgresql:') {
    throw new ConfigError(`${database.fromEnv ? 'WMP_DATABASE_URL' : '--database-url'}: not a postgres:// URL`);
  }
  const redisProtocol = protocolOf(redis.text);
  if (redisProtocol !== 'redis:' && redisProtocol !== 'rediss:') {
    throw new ConfigError(`${redis.fromEnv ? 'WMP_REDIS_URL' : '--redis-url'}: not a redis:// or rediss:// URL`);
  }
  return { databaseUrl: database.text, redisUrl: redis.text };
}

export function relayKeySource(file: Raw, seedHex: string | undefined): RelayKeySource | undefined {
  const seed = seedHex === undefined || seedHex === '' ? undefined : seedHex.trim();
  if (file !== undefined && seed !== undefined) {
    throw new ConfigError('--relay-key-file and WMP_RELAY_KEY exclude each other');
  }
  if (file !== undefined) {
    if (file.text.trim() === '') throw new ConfigError('--relay-key-file: must not be empty');
    return { file: file.text };
  }
  if (seed === undefined) return undefined;
  // The seed is a secret: the message says what is wrong with it, never what it is.
  if (!/^[0-9a-f]{64}$/i.test(seed)) throw new ConfigError('WMP_RELAY_KEY: not a relay key (64 hex digits expected)');
  return { seed: Uint8Array.from(Buffer.from(seed, 'hex')) };
}

const FEDERATION_MODES: readonly FederationMode[] = ['off', 'peers', 'open'];

/** A repeatable option's values: the flags given, else its variable split on commas or white space. */
export function listOf(
  flag: string,
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): { items: string[]; fromEnv: boolean } {
  const given = values[flag];
  if (Array.isArray(given) && given.length > 0) return { items: given as string[], fromEnv: false };
  const spec = OPTIONS.find((o) => o.flag === flag)!;
  const text = env[envOf(spec)!];
  const items = text === undefined ? [] : text.split(/[\s,]+/).filter((t) => t !== '');
  return { items, fromEnv: true };
}

/** `--federation`, `--route`, `--peer`, `--peer-trust` and the ERDS lists, checked. */
export function federationOf(
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  raw: (flag: string) => { text: string; fromEnv: boolean } | undefined,
): FederationConfig {
  const modeRaw = raw('federation');
  const mode = (modeRaw?.text ?? 'peers') as FederationMode;
  if (!FEDERATION_MODES.includes(mode)) {
    throw new ConfigError(
      `${modeRaw!.fromEnv ? 'WMP_FEDERATION' : '--federation'}: "${modeRaw!.text}" is not off, peers or open`,
    );
  }
  const routes = listOf('route', values, env);
  const parsedRoutes = routes.items.map((text) => {
    try {
      return parseRoute(text);
    } catch {
      throw new ConfigError(
        `${routes.fromEnv ? 'WMP_ROUTES' : '--route'}: "${text}" is not <identifier or prefix*>=<https relay URL>`,
      );
    }
  });
  const urls = (flag: string, name: string) => {
    const list = listOf(flag, values, env);
    for (const url of list.items) {
      if (!isBoxOrigin(url.replace(/\/+$/, '').replace(/\/wmp$/, ''))) {
        throw new ConfigError(
          `${list.fromEnv ? name : `--${flag}`}: "${url}" is not an https relay origin (http on loopback)`,
        );
      }
    }
    return list.items;
  };
  const erdsList = (flag: string) => listOf(flag, values, env).items;
  const modes = erdsList('erds-consignment-modes');
  const levels = erdsList('erds-assurance-levels');
  const policies = erdsList('erds-policies');
  // Only the lists given: the rest is what the relay serves (its modes, the levels it reaches).
  const erds =
    modes.length + levels.length + policies.length === 0
      ? undefined
      : {
          ...(modes.length > 0 ? { consignment_modes: modes } : {}),
          ...(levels.length > 0 ? { assurance_levels: levels } : {}),
          ...(policies.length > 0 ? { supported_policies: policies } : {}),
        };
  return {
    mode,
    routes: parsedRoutes,
    peers: urls('peer', 'WMP_PEERS'),
    trustedPeers: urls('peer-trust', 'WMP_PEER_TRUST'),
    ...(erds ? { erds } : {}),
  };
}

/** `--trusted-proxies`: comma-separated IP addresses (a name could resolve to anyone). */
export function trustedProxyList(given: Raw): string[] {
  const addresses = (given?.text ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  for (const address of addresses) {
    if (isIP(address) === 0) {
      throw new ConfigError(
        `${given!.fromEnv ? 'WMP_TRUSTED_PROXIES' : '--trusted-proxies'}: "${address}" is not an IP address`,
      );
    }
  }
  return addresses;
}
