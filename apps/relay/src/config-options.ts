// One table drives the parser, the environment names and `--help`: every option of wmp-relay.
// Defaults come from the library (one place for them).
import { DEFAULT_MAX_EVENT_BYTES } from '@wmp/ohan-seal';
import {
  DEFAULT_BOX_LIMITS,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RELAY_LIMITS,
  DEFAULT_RELAY_TIMINGS,
  type RelayLimits,
} from '@wmp/relay-server';
import { AUTH_OPTIONS } from './auth-config.js';
import type { BoxSettings, Kind, OptionSpec, Target } from './config-spec.js';
import { REGISTERED_OPTIONS } from './registered-config.js';

export const MiB = 1024 * 1024;

/** The library default of a target, for `--help`. */
export function defaultOf(target: Target): number {
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

export const OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'config',
    kind: 'string',
    help: 'a JSON or TOML file of settings, keys as the flags without their dashes (data-dir = "/var/lib/wmp-relay"); a flag or variable wins',
    default: 'none',
  },
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
  limit(
    'max-outbox-messages',
    'maxOutboxMessages',
    'int',
    "messages waiting for one peer relay, each recipient within its queue's limits (-31014 beyond)",
  ),
  limit('max-outbox-bytes', 'maxOutboxBytes', 'bytes', 'bytes waiting for one peer relay (-31014 beyond)'),
  limit('max-fanout-bytes', 'maxFanoutBytes', 'bytes', 'recipients x bytes of one deliver (-31007 beyond)'),
  limit(
    'routed-bytes-per-second',
    'routedBytesPerSecond',
    'bytes',
    'routed bytes per second of a sender, connection or source',
  ),
  limit('routed-bytes-burst', 'routedBytesBurst', 'bytes', 'burst of that budget'),
  limit(
    'source-read-bytes-per-second',
    'sourceReadBytesPerSecond',
    'bytes',
    'bytes read per second from one source address, 512 more per frame (its sockets wait, 429, beyond)',
  ),
  limit('source-read-burst', 'sourceReadBurst', 'bytes', 'burst of that budget'),
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
    help: 'stamp strength the card of a key the box does not know needs (opt-in; 0: no stamp, as the card format has none)',
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
    help: 'box requests per second per key, 4x per source (429 beyond)',
    min: 1,
    target: { box: 'requestsPerSecond' },
  },
  { flag: 'box-rate-burst', kind: 'int', help: 'burst of that rate', min: 1, target: { box: 'requestBurst' } },
  { flag: 'log-level', kind: 'string', help: 'debug, info, warn, error or silent', default: 'info' },
  {
    flag: 'demo',
    kind: 'bool',
    help: 'serve the browser demo page of the SDK at /demo/ (npm run demo; a demo, not for production)',
    default: 'off',
  },
  ...AUTH_OPTIONS,
  ...REGISTERED_OPTIONS,
  {
    flag: 'assertion-policy',
    kind: 'string',
    help: 'JSON file of the identity-assertion policy (formats, required_claims, trusted_issuers): sessions authenticate only with an SD-JWT VC that meets it',
    default: 'none',
  },
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
    flag: 'allow-private-peers',
    kind: 'bool',
    help: 'WEAKER (closed deployments, tests): fetch peers, well-known documents, cards and did:web documents at private and loopback addresses, plain http on loopback (--peer, --peer-trust, --route URLs are reached as given anyway)',
    default: 'off',
  },
  {
    flag: 'evidence',
    kind: 'string',
    help: 'on or off: offer the evidence capability (signed records of what the relay witnesses, served at /evidence)',
    default: 'on',
  },
  {
    flag: 'evidence-retention',
    kind: 'string',
    help: 'how long evidence records are kept, an ISO 8601 duration (P10Y under eIDAS)',
    default: 'P5Y',
  },
  limit(
    'max-evidence-records',
    'maxEvidenceRecords',
    'int',
    'evidence records kept (a message under evidence is refused with -31009 beyond)',
  ),
  {
    flag: 'tsa-url',
    kind: 'string',
    help: 'RFC 3161 time-stamping authority: every evidence record gets a token from it (needs --tsa-anchors)',
    default: 'none',
  },
  {
    flag: 'tsa-anchors',
    kind: 'string',
    help: "PEM file of the roots the TSA's certificate chains to (its tokens are checked before use)",
    default: 'none',
  },
  {
    flag: 'relay-chain-signatures',
    kind: 'string',
    help: 'when-needed: sign the relay_chain entry when the message leaves for a peer or is under evidence; always: every entry',
    default: 'when-needed',
  },
  {
    flag: 'erds-consignment-modes',
    kind: 'list',
    help: 'consignment modes served to recipients here and published in the well-known erds (repeatable; default basic, consented, consented_signed)',
    default: 'none',
  },
  {
    flag: 'erds-assurance-levels',
    kind: 'list',
    help: 'recipient assurance levels a message may ask for here, published in the well-known erds (repeatable; default the levels the assurance table reaches)',
    default: 'none',
  },
  {
    flag: 'erds-policies',
    kind: 'list',
    help: 'policies served here, published in the well-known erds supported_policies (repeatable)',
    default: 'none',
  },
];

/** `--max-queue-bytes` -> `WMP_MAX_QUEUE_BYTES`. */
export function envName(flag: string): string {
  return `WMP_${flag.replace(/-/g, '_').toUpperCase()}`;
}

/** The variable read for an option (`undefined` for the two box-mode flags, read as WMP_BOX_MODE). */
export function envOf(spec: OptionSpec): string | undefined {
  if (spec.env?.includes('=')) return undefined;
  return spec.env ?? envName(spec.flag);
}
