// The relay's settings: every one from a flag or an environment variable (flag first, then the
// variable, then the default), checked once at startup. Pure: no I/O, no process access.
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_EVENT_BYTES, isBoxOrigin } from '@wmp/ohan-seal';
import {
  DEFAULT_BOX_LIMITS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RELAY_LIMITS,
  DEFAULT_RELAY_TIMINGS,
  type FederationConfig,
  type FederationMode,
  type LogLevel,
  parseRoute,
  type RelayLimits,
  type RelayTimings,
} from '@wmp/relay-server';
import { AUTH_OPTIONS, type AuthSettings, authSettings } from './auth-config.js';

/** The OHAN box settings the app passes on (each left out takes the library's default). */
export interface BoxSettings {
  readonly boxBytes: number;
  readonly strangerBits: number;
  readonly cardStampBits: number;
  readonly maxCards: number;
  readonly cardTtlSeconds: number;
  readonly maxEventBytes: number;
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
}

/** Where a cluster node keeps what the nodes share. The URLs may hold passwords: never print them. */
export interface ClusterSettings {
  readonly databaseUrl: string;
  readonly redisUrl: string;
}

/** One relay key for every node of a cluster: a file (64 hex digits, like the data directory's) or the seed itself. */
export type RelayKeySource = { readonly file: string } | { readonly seed: Uint8Array };

/** Everything `wmp-relay` needs to start, after defaults and validation. */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** As given (relative to the working directory); the caller resolves it. */
  readonly dataDir: string;
  /** The public origin; `undefined`: `http://127.0.0.1:<listening port>`. */
  readonly publicUrl: string | undefined;
  /** Memory store and a fresh identity: nothing is read from or written to disk. */
  readonly ephemeral: boolean;
  /** Directory box (cards, publish needs cards) or relay-only. */
  readonly directory: boolean;
  /** Per-source limits apply to loopback addresses too (off: behind a local proxy every client is loopback). */
  readonly limitLoopback: boolean;
  /** Proxies whose X-Forwarded-For names the client (per-source limits count clients, not the proxy). */
  readonly trustedProxies: readonly string[];
  /** HTTP requests may name a hop session by id alone (weaker; for clients that send no token). */
  readonly httpSessionIdBinding: boolean;
  readonly logLevel: LogLevel;
  /** PostgreSQL and Redis: this process is one node of a cluster (undefined: SQLite or memory). */
  readonly cluster: ClusterSettings | undefined;
  /** This node's id in logs, metrics and presence; undefined: hostname and pid, taken at start. */
  readonly nodeId: string | undefined;
  /** The relay key: a file, or the seed from `WMP_RELAY_KEY`; undefined: the data directory's own. */
  readonly relayKey: RelayKeySource | undefined;
  /** Only what a flag or variable set: the rest is the relay library's default (one place for defaults). */
  readonly limits: Partial<RelayLimits>;
  readonly timings: Partial<RelayTimings>;
  readonly box: Partial<BoxSettings>;
  /** Trust anchors, TLS and did:web (issue 16). */
  readonly auth?: AuthSettings;
  /** Relay-to-relay routing: mode, static routes, peers, trusted peers, the published ERDS object. */
  readonly federation: FederationConfig;
}

export type ParseResult =
  | { readonly kind: 'config'; readonly config: AppConfig }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'error'; readonly message: string };

/** Exit code for a bad flag or value (usage error), as in BSD sysexits' EX_USAGE tradition. */
export const EXIT_USAGE = 2;

/** `list`: repeatable flag; its variable holds the values separated by commas or white space. */
type Kind = 'int' | 'bytes' | 'seconds' | 'string' | 'bool' | 'list';

/** Where a numeric option lands: a relay limit, a relay timing (seconds, or ms given in seconds) or a box setting. */
type Target =
  | { readonly limits: keyof RelayLimits }
  | { readonly timings: keyof RelayTimings; readonly ms?: true }
  | { readonly box: keyof BoxSettings };

export interface OptionSpec {
  readonly flag: string;
  readonly kind: Kind;
  readonly env?: string;
  readonly help: string;
  /** As shown in `--help`, for options that are not a library setting. */
  readonly default?: string;
  readonly min?: number;
  readonly max?: number;
  readonly target?: Target;
}

const MiB = 1024 * 1024;

/** The library default of a target, for `--help`. */
function defaultOf(target: Target): number {
  if ('limits' in target) return DEFAULT_RELAY_LIMITS[target.limits];
  if ('timings' in target) {
    const v = DEFAULT_RELAY_TIMINGS[target.timings];
    return target.ms ? v / 1000 : v;
  }
  return BOX_DEFAULTS[target.box];
}

const BOX_DEFAULTS: BoxSettings = {
  boxBytes: DEFAULT_BOX_LIMITS.boxBytes,
  strangerBits: DEFAULT_BOX_LIMITS.strangerBits,
  cardStampBits: DEFAULT_BOX_LIMITS.cardStampBits,
  maxCards: DEFAULT_BOX_LIMITS.maxCards,
  cardTtlSeconds: DEFAULT_BOX_LIMITS.cardTtlSeconds,
  maxEventBytes: DEFAULT_MAX_EVENT_BYTES,
  requestsPerSecond: DEFAULT_RATE_LIMIT.perSecond,
  requestBurst: DEFAULT_RATE_LIMIT.burst,
};

const limit = (flag: string, key: keyof RelayLimits, kind: Kind, help: string, min = 1, max?: number): OptionSpec => ({
  flag,
  kind,
  help,
  min,
  ...(max === undefined ? {} : { max }),
  target: { limits: key },
});

// One table drives the parser, the environment names and `--help`; defaults come from the library.
const OPTIONS: readonly OptionSpec[] = [
  { flag: 'port', kind: 'int', help: 'TCP port (0: any free port)', default: '8080', min: 0, max: 65535 },
  {
    flag: 'host',
    kind: 'string',
    help: 'address to listen on (the container image uses 0.0.0.0)',
    default: '127.0.0.1',
  },
  { flag: 'data-dir', kind: 'string', help: 'SQLite database and the relay key', default: './data' },
  {
    flag: 'database-url',
    kind: 'string',
    help: 'postgres:// URL: run as one node of a cluster on this database (needs --redis-url, --relay-key-file)',
    default: 'none: SQLite in --data-dir',
  },
  {
    flag: 'redis-url',
    kind: 'string',
    help: "redis:// or rediss:// URL: the cluster's presence, wake-ups, nonces and rate windows",
    default: 'none',
  },
  {
    flag: 'relay-key-file',
    kind: 'string',
    help: 'the relay key (64 hex digits), the same file on every node; or WMP_RELAY_KEY with the hex itself',
    default: '<data-dir>/relay-identity.key',
  },
  { flag: 'node-id', kind: 'string', help: 'this node in logs, metrics and presence', default: '<hostname>-<pid>' },
  {
    flag: 'public-url',
    kind: 'string',
    help: 'public origin: relay_chain, well-known, and the origin signed box requests must name',
    default: 'http://127.0.0.1:<port>',
  },
  {
    flag: 'ephemeral',
    kind: 'bool',
    help: 'keep everything in memory, with a fresh key (tests, demos)',
    default: 'off',
  },
  {
    flag: 'directory',
    kind: 'bool',
    env: 'WMP_BOX_MODE=directory',
    help: 'directory box: cards routes on, a publish needs cards for both keys',
    default: 'on',
  },
  {
    flag: 'relay-only',
    kind: 'bool',
    env: 'WMP_BOX_MODE=relay-only',
    help: 'box without a directory: no cards routes, no card check',
    default: 'off',
  },
  {
    flag: 'http-session-id-binding',
    kind: 'bool',
    help: 'WEAKER: HTTP requests may name a hop session by id alone, without its token (go-wmp, wmp-js)',
    default: 'off',
  },
  {
    flag: 'trusted-proxies',
    kind: 'string',
    help: 'comma-separated proxy IPs whose X-Forwarded-For names the client (a load balancer)',
    default: 'none',
  },
  {
    flag: 'limit-loopback',
    kind: 'bool',
    help: 'per-source limits apply to loopback addresses too (leave off behind a proxy on this host)',
    default: 'off',
  },
  limit('max-message-bytes', 'maxMessageBytes', 'bytes', 'largest WMP message on any binding', 1024, 64 * MiB),
  limit(
    'max-unauthenticated-body-bytes',
    'maxUnauthenticatedBodyBytes',
    'bytes',
    'largest POST that opens a session',
    1024,
  ),
  limit('max-connections', 'maxConnections', 'int', 'open WebSocket connections plus HTTP sessions'),
  limit(
    'max-unauthenticated-connections',
    'maxUnauthenticatedConnections',
    'int',
    'of those, connections with no authenticated session (1013 / 503 beyond)',
  ),
  limit(
    'max-connections-per-identity',
    'maxConnectionsPerIdentity',
    'int',
    'registered connections (devices) of one identity',
  ),
  limit('max-sessions-per-connection', 'maxSessionsPerConnection', 'int', 'sessions on one connection'),
  limit('max-sessions', 'maxSessions', 'int', 'sessions stored (-31007 beyond)'),
  limit('max-pending-sessions', 'maxPendingSessions', 'int', 'unauthenticated sessions stored (-31007 beyond)'),
  limit('max-queued', 'maxQueued', 'int', 'messages queued per recipient (-31014 beyond)'),
  limit('max-queue-bytes', 'maxQueueBytes', 'bytes', 'bytes queued per recipient (-31014 beyond)'),
  limit('max-queued-per-sender', 'maxQueuedPerSender', 'int', "messages one sender may have in one recipient's queue"),
  limit(
    'max-queue-bytes-per-sender',
    'maxQueueBytesPerSender',
    'bytes',
    "bytes one sender may have in one recipient's queue",
  ),
  limit('max-total-queue-bytes', 'maxTotalQueueBytes', 'bytes', 'bytes queued in the whole relay (-31014 beyond)'),
  limit('max-fanout-bytes', 'maxFanoutBytes', 'bytes', 'recipients x bytes of one deliver (-31007 beyond)'),
  limit(
    'routed-bytes-per-second',
    'routedBytesPerSecond',
    'bytes',
    'routed bytes per second of a sender, connection or source',
  ),
  limit('routed-bytes-burst', 'routedBytesBurst', 'bytes', 'burst of that budget'),
  limit('rate', 'requestsPerSecond', 'int', 'WMP requests per second per identity (-31007 beyond)'),
  limit('rate-burst', 'requestBurst', 'int', 'burst of that rate'),
  limit(
    'session-opens-per-second',
    'sessionOpensPerSecond',
    'int',
    'session create/resume/join per second per connection (4x per source)',
  ),
  limit('session-open-burst', 'sessionOpenBurst', 'int', 'burst of that rate'),
  limit('outbound-buffer-bytes', 'outboundBufferBytes', 'bytes', 'bytes queued to slow readers in the whole relay'),
  limit(
    'max-buffered-bytes-per-connection',
    'maxBufferedBytesPerConnection',
    'bytes',
    'a reader holding more unsent bytes is closed (1013)',
  ),
  limit('replay-buffer-chars', 'replayBufferChars', 'bytes', 'SSE replay characters kept in the whole relay'),
  limit(
    'body-bytes-in-flight',
    'bodyBytesInFlight',
    'bytes',
    'request body bytes being read in the whole relay (503 beyond)',
  ),
  limit(
    'max-key-packages-per-publish',
    'maxKeyPackagesPerPublish',
    'int',
    'MLS key packages verified per publish',
    1,
    100,
  ),
  limit(
    'key-package-fetches-per-target',
    'keyPackageFetchesPerTarget',
    'int',
    'MLS key packages all others may take of one identity per hour (then its last-resort one)',
  ),
  {
    flag: 'message-ttl',
    kind: 'seconds',
    help: 'seconds a queued message lives when neither it nor its session says',
    min: 1,
    target: { timings: 'messageTtlSeconds' },
  },
  {
    flag: 'max-message-ttl',
    kind: 'seconds',
    help: 'upper bound in seconds for any queued message',
    min: 1,
    target: { timings: 'maxMessageTtlSeconds' },
  },
  {
    flag: 'pending-session-ttl',
    kind: 'seconds',
    help: 'seconds an unauthenticated session lives',
    min: 1,
    target: { timings: 'pendingSessionTtlSeconds' },
  },
  {
    flag: 'unauthenticated-timeout',
    kind: 'seconds',
    help: 'seconds a connection without an authenticated session is kept',
    min: 1,
    target: { timings: 'unauthenticatedTimeoutMs', ms: true },
  },
  {
    flag: 'body-timeout',
    kind: 'seconds',
    help: 'seconds a request (headers and body) may take to arrive',
    min: 1,
    target: { timings: 'bodyTimeoutMs', ms: true },
  },
  {
    flag: 'box-bytes',
    kind: 'bytes',
    help: 'box capacity: undelivered sealed events in total',
    min: 1,
    target: { box: 'boxBytes' },
  },
  {
    flag: 'stranger-bits',
    kind: 'int',
    help: 'stamp strength a stranger event needs',
    min: 0,
    max: 255,
    target: { box: 'strangerBits' },
  },
  {
    flag: 'card-stamp-bits',
    kind: 'int',
    help: 'stamp strength the card of a key the box does not know needs (default: --stranger-bits)',
    min: 0,
    max: 255,
    target: { box: 'cardStampBits' },
  },
  { flag: 'max-cards', kind: 'int', help: 'cards in the directory', min: 1, target: { box: 'maxCards' } },
  {
    flag: 'card-ttl',
    kind: 'seconds',
    help: 'seconds a card lives unless posted again',
    min: 1,
    target: { box: 'cardTtlSeconds' },
  },
  {
    flag: 'max-event-bytes',
    kind: 'bytes',
    help: 'largest sealed event',
    min: 256,
    max: 16 * MiB,
    target: { box: 'maxEventBytes' },
  },
  {
    flag: 'box-rate',
    kind: 'int',
    help: 'box requests per second per key (429 beyond)',
    min: 1,
    target: { box: 'requestsPerSecond' },
  },
  { flag: 'box-rate-burst', kind: 'int', help: 'burst of that rate', min: 1, target: { box: 'requestBurst' } },
  { flag: 'log-level', kind: 'string', help: 'debug, info, warn, error or silent', default: 'info' },
  ...AUTH_OPTIONS,
  {
    flag: 'federation',
    kind: 'string',
    help: 'off, peers (forward anywhere, take forwards from --peer relays only) or open (take any relay)',
    default: 'peers',
  },
  {
    flag: 'route',
    kind: 'list',
    env: 'WMP_ROUTES',
    help: 'static route <identifier or prefix*>=<relay URL>, tried first (repeatable)',
    default: 'none',
  },
  {
    flag: 'peer',
    kind: 'list',
    env: 'WMP_PEERS',
    help: 'a peer relay URL whose forwarded messages are taken (repeatable)',
    default: 'none',
  },
  {
    flag: 'peer-trust',
    kind: 'list',
    env: 'WMP_PEER_TRUST',
    help: 'a peer relay URL trusted to speak for any sender not homed here (repeatable; also a peer)',
    default: 'none',
  },
  {
    flag: 'erds-consignment-modes',
    kind: 'list',
    help: 'ERDS consignment modes published in the well-known erds (repeatable)',
    default: 'none',
  },
  {
    flag: 'erds-assurance-levels',
    kind: 'list',
    help: 'ERDS recipient assurance levels published in the well-known erds (repeatable)',
    default: 'none',
  },
  {
    flag: 'erds-policies',
    kind: 'list',
    help: 'ERDS policies published in the well-known erds (repeatable)',
    default: 'none',
  },
];

const FEDERATION_MODES: readonly FederationMode[] = ['off', 'peers', 'open'];

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** `--max-queue-bytes` -> `WMP_MAX_QUEUE_BYTES`. */
export function envName(flag: string): string {
  return `WMP_${flag.replace(/-/g, '_').toUpperCase()}`;
}

/** The variable read for an option (`undefined` for the two box-mode flags, read as WMP_BOX_MODE). */
function envOf(spec: OptionSpec): string | undefined {
  if (spec.env?.includes('=')) return undefined;
  return spec.env ?? envName(spec.flag);
}

class ConfigError extends Error {}

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

function parseInteger(spec: OptionSpec, text: string, fromEnv: boolean): number {
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

function parseBool(spec: OptionSpec, text: string): boolean {
  const t = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  throw new ConfigError(`${envOf(spec)}: "${text}" is not a boolean (1/0, true/false, yes/no, on/off)`);
}

/** A host name or an IP address to bind to. */
function checkHost(text: string, fromEnv: boolean): string {
  const ok =
    isIP(text) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*$/.test(text);
  if (!ok) throw new ConfigError(`${fromEnv ? 'WMP_HOST' : '--host'}: "${text}" is not a host name or IP address`);
  return text;
}

function checkPublicUrl(text: string, fromEnv: boolean): string {
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
const NODE_ID = /^[A-Za-z0-9._-]{1,64}$/;

type Raw = { text: string; fromEnv: boolean } | undefined;

/** The protocol of a URL, or undefined; the URL itself is never put in a message (it may hold a password). */
function protocolOf(text: string): string | undefined {
  try {
    return new URL(text).protocol;
  } catch {
    return undefined;
  }
}

function clusterSettings(database: Raw, redis: Raw): ClusterSettings | undefined {
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

function relayKeySource(file: Raw, seedHex: string | undefined): RelayKeySource | undefined {
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

/**
 * Parses `argv` (without `node` and the script) and `env`: flag first, then the environment
 * variable, then the default. An empty environment variable counts as unset.
 */
export function parseConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  try {
    return parseOrThrow(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return { kind: 'error', message: error.message };
    // parseArgs reports unknown flags and missing values with a TypeError and an ERR_PARSE_ARGS_* code.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      const message = (error as Error).message;
      const option = /'(-[^' ]+)/.exec(message)?.[1];
      if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option)
        return { kind: 'error', message: `unknown option ${option}` };
      if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
        return {
          kind: 'error',
          message: `${option}: ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'}`,
        };
      }
      return { kind: 'error', message };
    }
    throw error;
  }
}

function parseOrThrow(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseResult {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const spec of OPTIONS) {
    options[spec.flag] =
      spec.kind === 'list' ? { type: 'string', multiple: true } : { type: spec.kind === 'bool' ? 'boolean' : 'string' };
  }
  const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  if (values.help) return { kind: 'help', text: helpText() };
  if (positionals.length > 0) throw new ConfigError(`unexpected argument "${positionals[0]}" (see --help)`);

  // The value of one option and whether it came from the environment (for the error message).
  const raw = (flag: string): { text: string; fromEnv: boolean } | undefined => {
    const spec = OPTIONS.find((o) => o.flag === flag)!;
    const v = values[flag];
    if (typeof v === 'string') return { text: v, fromEnv: false };
    const name = envOf(spec);
    const e = name === undefined ? undefined : env[name];
    if (e !== undefined && e !== '') return { text: e, fromEnv: true };
    return undefined;
  };
  /** The option's value if a flag or variable set it. */
  const given = (spec: OptionSpec): number | undefined => {
    const r = raw(spec.flag);
    return r === undefined ? undefined : parseInteger(spec, r.text, r.fromEnv);
  };
  const bool = (flag: string): boolean | undefined => {
    const spec = OPTIONS.find((o) => o.flag === flag)!;
    if (values[flag] === true) return true;
    const name = envOf(spec);
    const e = name === undefined ? undefined : env[name];
    return e === undefined || e === '' ? undefined : parseBool(spec, e);
  };

  const hostRaw = raw('host');
  const host = hostRaw === undefined ? '127.0.0.1' : checkHost(hostRaw.text, hostRaw.fromEnv);
  const dataRaw = raw('data-dir');
  if (dataRaw !== undefined && dataRaw.text.trim() === '') throw new ConfigError('--data-dir: must not be empty');
  const urlRaw = raw('public-url');
  const levelRaw = raw('log-level');
  const logLevel = (levelRaw?.text ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(
      `${levelRaw!.fromEnv ? 'WMP_LOG_LEVEL' : '--log-level'}: "${levelRaw!.text}" is not one of ${LOG_LEVELS.join(', ')}`,
    );
  }

  // Box mode: --directory and --relay-only are the two values of one setting, WMP_BOX_MODE.
  if (values.directory === true && values['relay-only'] === true) {
    throw new ConfigError('--directory and --relay-only exclude each other');
  }
  let directory = true;
  if (values.directory === true) directory = true;
  else if (values['relay-only'] === true) directory = false;
  else if (env.WMP_BOX_MODE !== undefined && env.WMP_BOX_MODE !== '') {
    if (env.WMP_BOX_MODE !== 'directory' && env.WMP_BOX_MODE !== 'relay-only') {
      throw new ConfigError(`WMP_BOX_MODE: "${env.WMP_BOX_MODE}" is not "directory" or "relay-only"`);
    }
    directory = env.WMP_BOX_MODE === 'directory';
  }

  const limits: Record<string, number> = {};
  const timings: Record<string, number> = {};
  const box: Record<string, number> = {};
  for (const spec of OPTIONS) {
    const target = spec.target;
    const value = target === undefined ? undefined : given(spec);
    if (target === undefined || value === undefined) continue;
    if ('limits' in target) limits[target.limits] = value;
    else if ('timings' in target) timings[target.timings] = target.ms ? value * 1000 : value;
    else box[target.box] = value;
  }
  const cluster = clusterSettings(raw('database-url'), raw('redis-url'));
  const ephemeral = bool('ephemeral') ?? false;
  if (ephemeral && cluster !== undefined) throw new ConfigError('--ephemeral and --database-url exclude each other');
  const relayKey = relayKeySource(raw('relay-key-file'), env.WMP_RELAY_KEY);
  if (cluster !== undefined && relayKey === undefined) {
    throw new ConfigError(
      '--database-url: every node of a cluster needs the same relay key: give --relay-key-file or WMP_RELAY_KEY',
    );
  }
  if (ephemeral && relayKey !== undefined)
    throw new ConfigError('--ephemeral takes a fresh key: leave out --relay-key-file and WMP_RELAY_KEY');
  const proxiesRaw = raw('trusted-proxies');
  const trustedProxies = (proxiesRaw?.text ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  for (const address of trustedProxies) {
    if (isIP(address) === 0) {
      throw new ConfigError(
        `${proxiesRaw!.fromEnv ? 'WMP_TRUSTED_PROXIES' : '--trusted-proxies'}: "${address}" is not an IP address`,
      );
    }
  }
  const nodeRaw = raw('node-id');
  if (nodeRaw !== undefined && !NODE_ID.test(nodeRaw.text)) {
    throw new ConfigError(
      `${nodeRaw.fromEnv ? 'WMP_NODE_ID' : '--node-id'}: "${nodeRaw.text}" is not a node id (1-64 of A-Z a-z 0-9 . _ -)`,
    );
  }

  const ttl = timings.messageTtlSeconds ?? DEFAULT_RELAY_TIMINGS.messageTtlSeconds;
  const maxTtl = timings.maxMessageTtlSeconds ?? DEFAULT_RELAY_TIMINGS.maxMessageTtlSeconds;
  if (ttl > maxTtl) throw new ConfigError(`--message-ttl (${ttl}) must not exceed --max-message-ttl (${maxTtl})`);
  const portSpec = OPTIONS.find((o) => o.flag === 'port')!;

  const config: AppConfig = {
    federation: federationOf(values, env, raw),
    port: given(portSpec) ?? 8080,
    host,
    dataDir: dataRaw?.text ?? './data',
    publicUrl: urlRaw === undefined ? undefined : checkPublicUrl(urlRaw.text, urlRaw.fromEnv),
    ephemeral,
    directory,
    limitLoopback: bool('limit-loopback') ?? false,
    httpSessionIdBinding: bool('http-session-id-binding') ?? false,
    trustedProxies,
    logLevel,
    cluster,
    nodeId: nodeRaw?.text,
    relayKey,
    limits,
    timings,
    box,
    auth: authSettings(
      {
        text: (flag) => raw(flag)?.text,
        bool,
        number: (flag) => given(OPTIONS.find((o) => o.flag === flag)!),
      },
      (message) => {
        throw new ConfigError(message);
      },
    ),
  };
  return { kind: 'config', config };
}

/** A repeatable option's values: the flags given, else its variable split on commas or white space. */
function listOf(
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
function federationOf(
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
  const erds =
    modes.length + levels.length + policies.length === 0
      ? undefined
      : { consignment_modes: modes, assurance_levels: levels, supported_policies: policies };
  return {
    mode,
    routes: parsedRoutes,
    peers: urls('peer', 'WMP_PEERS'),
    trustedPeers: urls('peer-trust', 'WMP_PEER_TRUST'),
    ...(erds ? { erds } : {}),
  };
}

/** 16777216 -> `16MiB`; a size that is no whole KiB/MiB/GiB stays a number. */
function bytesText(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 * MiB],
    ['MiB', MiB],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** `wmp-relay --help`: every option with its environment variable and default. */
export function helpText(): string {
  const rows = OPTIONS.map((o) => {
    const flag = `--${o.flag}${o.kind === 'bool' ? '' : o.kind === 'bytes' ? ' <bytes>' : o.kind === 'int' ? ' <n>' : o.kind === 'seconds' ? ' <s>' : ' <value>'}`;
    const env = o.env ?? envName(o.flag);
    const value = o.target === undefined ? o.default : String(defaultOf(o.target));
    const shown = o.kind === 'bytes' ? bytesText(Number(value)) : value;
    return { flag, env, text: `${o.help} (default: ${shown})` };
  });
  const w1 = Math.max(...rows.map((r) => r.flag.length));
  const w2 = Math.max(...rows.map((r) => r.env.length));
  return [
    'Usage: wmp-relay [options]',
    '',
    'The WMP relay: WebSocket and HTTP+SSE at /wmp, the OHAN box at /ohan/v1, /health and /metrics on one port.',
    'Every option can also be set by its environment variable; a flag wins over the variable.',
    'Byte sizes take an optional binary unit: 512KiB, 16MiB, 1GiB (or k, m, g).',
    '',
    ...rows.map((r) => `  ${r.flag.padEnd(w1)}  ${r.env.padEnd(w2)}  ${r.text}`),
    `  ${'-h, --help'.padEnd(w1)}  ${''.padEnd(w2)}  this text`,
    '',
  ].join('\n');
}
