import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BOX_LIMITS, DEFAULT_RELAY_LIMITS, DEFAULT_RELAY_TIMINGS } from '@wmp/relay-server';
import { describe, expect, it } from 'vitest';
import { type AppConfig, envName, helpText, type ParseResult, parseConfig } from '../src/config.js';
import { REPO_ROOT, runRelay } from './fixtures/relay-process.js';

function ok(result: ParseResult): AppConfig {
  if (result.kind !== 'config') throw new Error(`expected a config, got ${JSON.stringify(result)}`);
  return result.config;
}
function error(result: ParseResult): string {
  if (result.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  return result.message;
}
const parse = (argv: string[], env: Record<string, string> = {}) => parseConfig(argv, env);

const MiB = 1024 * 1024;

/** Every numeric option: its flag, where it lands in the config, and a valid value. */
const NUMERIC: readonly [flag: string, get: (c: AppConfig) => number | undefined, value: number][] = [
  ['port', (c) => c.port, 9000],
  ['max-message-bytes', (c) => c.limits.maxMessageBytes, 2 * MiB],
  ['max-connections', (c) => c.limits.maxConnections, 50],
  ['max-connections-per-identity', (c) => c.limits.maxConnectionsPerIdentity, 3],
  ['max-sessions-per-connection', (c) => c.limits.maxSessionsPerConnection, 4],
  ['max-queued', (c) => c.limits.maxQueued, 77],
  ['max-evidence-records', (c) => c.limits.maxEvidenceRecords, 5000],
  ['max-queue-bytes', (c) => c.limits.maxQueueBytes, 5 * MiB],
  ['max-unauthenticated-body-bytes', (c) => c.limits.maxUnauthenticatedBodyBytes, 32 * 1024],
  ['max-unauthenticated-connections', (c) => c.limits.maxUnauthenticatedConnections, 100],
  ['max-sessions', (c) => c.limits.maxSessions, 1000],
  ['max-pending-sessions', (c) => c.limits.maxPendingSessions, 100],
  ['max-queued-per-sender', (c) => c.limits.maxQueuedPerSender, 30],
  ['max-queue-bytes-per-sender', (c) => c.limits.maxQueueBytesPerSender, MiB],
  ['max-total-queue-bytes', (c) => c.limits.maxTotalQueueBytes, 100 * MiB],
  ['max-outbox-messages', (c) => c.limits.maxOutboxMessages, 5000],
  ['max-outbox-bytes', (c) => c.limits.maxOutboxBytes, 32 * MiB],
  ['max-fanout-bytes', (c) => c.limits.maxFanoutBytes, 2 * MiB],
  ['routed-bytes-per-second', (c) => c.limits.routedBytesPerSecond, 65536],
  ['routed-bytes-burst', (c) => c.limits.routedBytesBurst, MiB],
  ['source-read-bytes-per-second', (c) => c.limits.sourceReadBytesPerSecond, MiB],
  ['source-read-burst', (c) => c.limits.sourceReadBurst, MiB],
  ['session-opens-per-second', (c) => c.limits.sessionOpensPerSecond, 2],
  ['session-open-burst', (c) => c.limits.sessionOpenBurst, 8],
  ['outbound-buffer-bytes', (c) => c.limits.outboundBufferBytes, 64 * MiB],
  ['max-buffered-bytes-per-connection', (c) => c.limits.maxBufferedBytesPerConnection, MiB],
  ['replay-buffer-chars', (c) => c.limits.replayBufferChars, 8 * MiB],
  ['body-bytes-in-flight', (c) => c.limits.bodyBytesInFlight, 32 * MiB],
  ['max-key-packages-per-publish', (c) => c.limits.maxKeyPackagesPerPublish, 8],
  ['rate', (c) => c.limits.requestsPerSecond, 10],
  ['rate-burst', (c) => c.limits.requestBurst, 20],
  ['key-package-fetches-per-target', (c) => c.limits.keyPackageFetchesPerTarget, 5],
  ['message-ttl', (c) => c.timings.messageTtlSeconds, 60],
  ['max-message-ttl', (c) => c.timings.maxMessageTtlSeconds, 86_400],
  ['pending-session-ttl', (c) => c.timings.pendingSessionTtlSeconds, 30],
  ['unauthenticated-timeout', (c) => (c.timings.unauthenticatedTimeoutMs ?? 0) / 1000, 10],
  ['body-timeout', (c) => (c.timings.bodyTimeoutMs ?? 0) / 1000, 20],
  ['box-bytes', (c) => c.box.boxBytes, 64 * MiB],
  ['stranger-bits', (c) => c.box.strangerBits, 20],
  ['card-stamp-bits', (c) => c.box.cardStampBits, 12],
  ['max-cards', (c) => c.box.maxCards, 500],
  ['card-ttl', (c) => c.box.cardTtlSeconds, 86_400],
  ['max-event-bytes', (c) => c.box.maxEventBytes, 64 * 1024],
  ['box-rate', (c) => c.box.requestsPerSecond, 5],
  ['box-rate-burst', (c) => c.box.requestBurst, 9],
];

describe('parseConfig: defaults', () => {
  it('gives the documented defaults with no flags and no environment', () => {
    expect(ok(parse([]))).toEqual({
      port: 8080,
      host: '127.0.0.1',
      dataDir: './data',
      publicUrl: undefined,
      ephemeral: false,
      directory: true,
      logLevel: 'info',
      demo: false,
      limitLoopback: false,
      httpSessionIdBinding: false,
      trustedProxies: [],
      cluster: undefined,
      nodeId: undefined,
      relayKey: undefined,
      // Nothing set: the relay library's own defaults apply (one place for them).
      limits: {},
      timings: {},
      box: {},
      // No trust anchors, no TLS, no did:web: did:key and did:jwk over plain HTTP.
      auth: {
        trustAnchorsFile: undefined,
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        tlsClientCaFile: undefined,
        didWeb: false,
        allowPrivatePeers: false,
        didWebTimeoutMs: undefined,
        didWebMaxBytes: undefined,
      },
      federation: { mode: 'peers', routes: [], peers: [], trustedPeers: [], allowPrivatePeers: false },
      // Delegation and scheduled delivery on, the library's assurance table, no recipient metadata.
      registered: {
        delegation: true,
        scheduledDelivery: true,
        assurance: {},
        highAssuranceAnchorsFile: undefined,
        delegationIssuers: {},
        acceptedContentTypes: undefined,
        recipientMaxMessageSize: undefined,
        consignmentPreference: undefined,
        encryptionRequired: false,
      },
      // Evidence on, the library's retention, no TSA, entries signed where they carry value.
      evidence: { enabled: true, retention: 'P5Y', tsa: undefined, relayChainSignatures: 'when-needed' },
    } satisfies AppConfig);
    expect(DEFAULT_BOX_LIMITS.boxBytes).toBe(1024 ** 3);
    expect(DEFAULT_BOX_LIMITS.strangerBits).toBe(18);
    // A card carries no stamp in the OHAN card format: asking one is the operator's opt-in.
    expect(DEFAULT_BOX_LIMITS.cardStampBits).toBe(0);
  });

  it('treats an empty environment variable as unset', () => {
    expect(ok(parse([], { WMP_PORT: '', WMP_HOST: '', WMP_EPHEMERAL: '', WMP_BOX_MODE: '' }))).toEqual(ok(parse([])));
  });
});

describe('parseConfig: every numeric option by flag, by environment, flag first', () => {
  for (const [flag, get, value] of NUMERIC) {
    it(`--${flag} / ${envName(flag)}`, () => {
      expect(get(ok(parse([`--${flag}`, String(value)])))).toBe(value);
      expect(get(ok(parse([`--${flag}=${value}`])))).toBe(value);
      expect(get(ok(parse([], { [envName(flag)]: String(value) })))).toBe(value);
      // The flag wins over the variable.
      expect(get(ok(parse([`--${flag}`, String(value)], { [envName(flag)]: String(value + 1) })))).toBe(value);
      // Not a number, negative, fractional: refused, naming the flag or the variable.
      for (const bad of ['abc', '-1', '1.5', '']) {
        expect(error(parse([`--${flag}=${bad}`]))).toContain(`--${flag}`);
      }
      expect(error(parse([], { [envName(flag)]: 'abc' }))).toContain(envName(flag));
    });
  }

  it('takes byte sizes with binary units', () => {
    const c = ok(parse(['--max-queue-bytes', '16MiB', '--box-bytes', '2g', '--max-event-bytes', '64k']));
    expect(c.limits.maxQueueBytes).toBe(16 * MiB);
    expect(c.box.boxBytes).toBe(2 * 1024 * MiB);
    expect(c.box.maxEventBytes).toBe(64 * 1024);
    expect(ok(parse([], { WMP_MAX_MESSAGE_BYTES: '512KiB' })).limits.maxMessageBytes).toBe(512 * 1024);
    expect(error(parse(['--box-bytes', '1TB']))).toMatch(/--box-bytes: "1TB" is not a byte size/);
    expect(error(parse(['--box-bytes', 'MiB']))).toMatch(/not a byte size/);
  });

  it('refuses values out of range', () => {
    expect(error(parse(['--port', '65536']))).toBe('--port: 65536 is out of range (0..65535)');
    expect(ok(parse(['--port', '0'])).port).toBe(0);
    expect(error(parse(['--max-queued', '0']))).toBe('--max-queued: 0 is out of range (>= 1)');
    expect(error(parse([], { WMP_KEY_PACKAGE_FETCHES_PER_TARGET: '0' }))).toBe(
      'WMP_KEY_PACKAGE_FETCHES_PER_TARGET: 0 is out of range (>= 1)',
    );
    expect(error(parse(['--stranger-bits', '256']))).toMatch(/out of range \(0\.\.255\)/);
    expect(ok(parse(['--stranger-bits', '0'])).box.strangerBits).toBe(0);
    expect(error(parse(['--max-message-bytes', '100']))).toMatch(/--max-message-bytes: 100 is out of range/);
    expect(error(parse(['--max-event-bytes', '255']))).toMatch(/out of range/);
    expect(error(parse(['--box-bytes', String(2 ** 60)]))).toMatch(/out of range/);
    expect(error(parse(['--message-ttl', '100', '--max-message-ttl', '50']))).toMatch(
      /--message-ttl \(100\) must not exceed --max-message-ttl \(50\)/,
    );
  });
});

describe('parseConfig: the other options', () => {
  it('--host / WMP_HOST: an IP address or a host name', () => {
    expect(ok(parse(['--host', '0.0.0.0'])).host).toBe('0.0.0.0');
    expect(ok(parse(['--host', '::'])).host).toBe('::');
    expect(ok(parse([], { WMP_HOST: 'relay.internal' })).host).toBe('relay.internal');
    expect(ok(parse(['--host', '::1'], { WMP_HOST: '0.0.0.0' })).host).toBe('::1');
    expect(error(parse(['--host', 'not a host']))).toBe('--host: "not a host" is not a host name or IP address');
    expect(error(parse([], { WMP_HOST: 'http://x' }))).toMatch(/^WMP_HOST: /);
  });

  it('--data-dir / WMP_DATA_DIR', () => {
    expect(ok(parse(['--data-dir', '/var/lib/wmp'])).dataDir).toBe('/var/lib/wmp');
    expect(ok(parse([], { WMP_DATA_DIR: '/data' })).dataDir).toBe('/data');
    expect(ok(parse(['--data-dir', 'a'], { WMP_DATA_DIR: 'b' })).dataDir).toBe('a');
    expect(error(parse(['--data-dir', ' ']))).toMatch(/--data-dir: must not be empty/);
  });

  it('--public-url / WMP_PUBLIC_URL: an https origin, or http on loopback; a trailing slash is dropped', () => {
    expect(ok(parse(['--public-url', 'https://relay.example'])).publicUrl).toBe('https://relay.example');
    expect(ok(parse(['--public-url', 'https://relay.example:8443/'])).publicUrl).toBe('https://relay.example:8443');
    expect(ok(parse([], { WMP_PUBLIC_URL: 'http://127.0.0.1:8080' })).publicUrl).toBe('http://127.0.0.1:8080');
    expect(ok(parse(['--public-url', 'http://localhost:9'])).publicUrl).toBe('http://localhost:9');
    for (const bad of [
      'http://relay.example',
      'https://relay.example/path',
      'ftp://x',
      'relay.example',
      'https://u@x',
    ]) {
      expect(error(parse(['--public-url', bad]))).toMatch(/^--public-url: .* is not an origin/);
    }
    expect(error(parse([], { WMP_PUBLIC_URL: 'http://example.com' }))).toMatch(/^WMP_PUBLIC_URL: /);
  });

  it('--ephemeral / WMP_EPHEMERAL', () => {
    expect(ok(parse(['--ephemeral'])).ephemeral).toBe(true);
    for (const t of ['1', 'true', 'yes', 'on', 'TRUE'])
      expect(ok(parse([], { WMP_EPHEMERAL: t })).ephemeral).toBe(true);
    for (const f of ['0', 'false', 'no', 'off']) expect(ok(parse([], { WMP_EPHEMERAL: f })).ephemeral).toBe(false);
    expect(ok(parse(['--ephemeral'], { WMP_EPHEMERAL: '0' })).ephemeral).toBe(true);
    expect(error(parse([], { WMP_EPHEMERAL: 'maybe' }))).toMatch(/^WMP_EPHEMERAL: "maybe" is not a boolean/);
    expect(error(parse(['--ephemeral=yes']))).toBe('--ephemeral: takes no value');
  });

  it('--directory / --relay-only / WMP_BOX_MODE (default: directory)', () => {
    expect(ok(parse(['--directory'])).directory).toBe(true);
    expect(ok(parse(['--relay-only'])).directory).toBe(false);
    expect(ok(parse([], { WMP_BOX_MODE: 'relay-only' })).directory).toBe(false);
    expect(ok(parse([], { WMP_BOX_MODE: 'directory' })).directory).toBe(true);
    expect(ok(parse(['--directory'], { WMP_BOX_MODE: 'relay-only' })).directory).toBe(true);
    expect(ok(parse(['--relay-only'], { WMP_BOX_MODE: 'directory' })).directory).toBe(false);
    expect(error(parse(['--directory', '--relay-only']))).toBe('--directory and --relay-only exclude each other');
    expect(error(parse([], { WMP_BOX_MODE: 'open' }))).toBe('WMP_BOX_MODE: "open" is not "directory" or "relay-only"');
  });

  it('--log-level / WMP_LOG_LEVEL', () => {
    for (const level of ['debug', 'info', 'warn', 'error', 'silent'] as const) {
      expect(ok(parse(['--log-level', level])).logLevel).toBe(level);
      expect(ok(parse([], { WMP_LOG_LEVEL: level })).logLevel).toBe(level);
    }
    expect(error(parse(['--log-level', 'loud']))).toBe(
      '--log-level: "loud" is not one of debug, info, warn, error, silent',
    );
    expect(error(parse([], { WMP_LOG_LEVEL: 'LOUD' }))).toMatch(/^WMP_LOG_LEVEL: /);
  });

  it('--database-url / --redis-url / --relay-key-file / WMP_RELAY_KEY: a cluster node, all three together', () => {
    const secret = 'postgres://wmp:s3cret-pw@db.internal:5432/wmp';
    const redis = 'redis://:r3dis-pw@cache.internal:6379';
    const key = 'ab'.repeat(32);
    const node = ok(parse(['--database-url', secret, '--redis-url', redis, '--relay-key-file', '/run/key']));
    expect(node.cluster).toEqual({ databaseUrl: secret, redisUrl: redis });
    expect(node.relayKey).toEqual({ file: '/run/key' });
    const fromEnv = ok(
      parse([], { WMP_DATABASE_URL: secret, WMP_REDIS_URL: 'rediss://cache:6380', WMP_RELAY_KEY: key }),
    );
    expect(fromEnv.cluster).toEqual({ databaseUrl: secret, redisUrl: 'rediss://cache:6380' });
    expect(fromEnv.relayKey).toEqual({ seed: Uint8Array.from(Buffer.from(key, 'hex')) });
    // A relay key alone is fine (a single node that keeps its key elsewhere).
    expect(ok(parse(['--relay-key-file', 'k'])).relayKey).toEqual({ file: 'k' });

    // Each needs the others; none of the refusals repeats a URL or the key (they hold secrets).
    const refusals: [string[], Record<string, string>, string][] = [
      [['--database-url', secret, '--relay-key-file', 'k'], {}, '--redis-url'],
      [['--redis-url', redis], {}, '--database-url'],
      [['--database-url', secret, '--redis-url', redis], {}, '--relay-key-file'],
      [
        ['--database-url', 'mysql://u:s3cret-pw@h/db', '--redis-url', redis, '--relay-key-file', 'k'],
        {},
        '--database-url',
      ],
      [[], { WMP_DATABASE_URL: 'not a url s3cret-pw', WMP_REDIS_URL: redis, WMP_RELAY_KEY: key }, 'WMP_DATABASE_URL'],
      [['--database-url', secret, '--redis-url', 'http://r3dis-pw@h', '--relay-key-file', 'k'], {}, '--redis-url'],
      [['--ephemeral', '--database-url', secret, '--redis-url', redis, '--relay-key-file', 'k'], {}, '--ephemeral'],
      [['--ephemeral', '--relay-key-file', 'k'], {}, '--ephemeral'],
      [['--relay-key-file', 'k'], { WMP_RELAY_KEY: key }, 'exclude'],
      [[], { WMP_RELAY_KEY: `${key.slice(2)}zz` }, 'WMP_RELAY_KEY'],
    ];
    for (const [argv, env, named] of refusals) {
      const message = error(parse(argv, env));
      expect(message).toContain(named);
      for (const secretPart of ['s3cret-pw', 'r3dis-pw', key.slice(2, 20)]) expect(message).not.toContain(secretPart);
    }
  });

  it('--trusted-proxies / WMP_TRUSTED_PROXIES: IP addresses only', () => {
    expect(ok(parse(['--trusted-proxies', '10.0.0.2, ::1'])).trustedProxies).toEqual(['10.0.0.2', '::1']);
    expect(ok(parse([], { WMP_TRUSTED_PROXIES: '172.18.0.5' })).trustedProxies).toEqual(['172.18.0.5']);
    expect(error(parse(['--trusted-proxies', '10.0.0.2,proxy.internal']))).toContain('"proxy.internal" is not an IP');
  });

  it('--node-id / WMP_NODE_ID: short and log-safe', () => {
    expect(ok(parse(['--node-id', 'relay-a.1'])).nodeId).toBe('relay-a.1');
    expect(ok(parse([], { WMP_NODE_ID: 'n_2' })).nodeId).toBe('n_2');
    for (const bad of ['has space', 'x'.repeat(65), 'a"b', 'ü'])
      expect(error(parse(['--node-id', bad]))).toContain('--node-id');
  });

  it('the README configuration table is --help: every flag with its variable and default', () => {
    const readme = readFileSync(join(REPO_ROOT, 'apps/relay/README.md'), 'utf8');
    for (const line of helpText()
      .split('\n')
      .filter((l) => l.startsWith('  --'))) {
      const [, flag, env, text] = /^ {2}(--\S+(?: <\w+>)?)\s+(\S+)\s+(.*)$/.exec(line)!;
      expect(readme).toContain(`| \`${flag}\` | \`${env}\` | ${text!.replace(/\|/g, '\\|')} |`);
    }
  });

  it('refuses unknown flags, missing values and positional arguments', () => {
    expect(error(parse(['--bogus']))).toBe('unknown option --bogus');
    expect(error(parse(['-x']))).toBe('unknown option -x');
    expect(error(parse(['--port']))).toBe('--port: needs a value');
    expect(error(parse(['serve']))).toBe('unexpected argument "serve" (see --help)');
  });

  it('--help lists every option with its variable and default', () => {
    expect(parse(['--help'])).toEqual({ kind: 'help', text: helpText() });
    expect(parse(['-h', '--bogus-after-help-is-still-an-error']).kind).toBe('error');
    expect(parse(['-h']).kind).toBe('help');
    const text = helpText();
    for (const [flag] of NUMERIC)
      expect(text).toMatch(new RegExp(`--${flag} <\\w+> +${envName(flag)} +.*\\(default: `));
    for (const flag of [
      'host',
      'data-dir',
      'public-url',
      'ephemeral',
      'limit-loopback',
      'http-session-id-binding',
      'log-level',
    ]) {
      expect(text).toMatch(new RegExp(`--${flag}\\b.* ${envName(flag)} .*\\(default: `));
    }
    expect(text).toMatch(/--directory +WMP_BOX_MODE=directory .*\(default: on\)/);
    expect(text).toMatch(/--relay-only +WMP_BOX_MODE=relay-only .*\(default: off\)/);
    expect(text).toMatch(/--box-bytes .*\(default: 1GiB\)/);
    expect(text).toMatch(/--data-dir .*\(default: \.\/data\)/);
    expect(text).toMatch(/--port .*\(default: 8080\)/);
    expect(text).toMatch(
      new RegExp(
        `--key-package-fetches-per-target .*\\(default: ${DEFAULT_RELAY_LIMITS.keyPackageFetchesPerTarget}\\)`,
      ),
    );
    expect(text).toMatch(new RegExp(`--message-ttl .*\\(default: ${DEFAULT_RELAY_TIMINGS.messageTtlSeconds}\\)`));
    expect(text).toMatch(/--unauthenticated-timeout <s> .*\(default: 30\)/);
    expect(text).toMatch(/--max-total-queue-bytes <bytes> .*\(default: 1GiB\)/);
  });
});

describe('wmp-relay exit codes', () => {
  it('exits 2 with a clear message on a bad value, 0 with the help text', async () => {
    const bad = await runRelay(['--port', 'eighty']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'wmp-relay: --port: "eighty" is not an integer >= 0\nRun wmp-relay --help for the options.\n',
    );
    expect(bad.stdout).toBe('');
    const badEnv = await runRelay([], { WMP_STRANGER_BITS: '300' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toMatch(/^wmp-relay: WMP_STRANGER_BITS: 300 is out of range \(0\.\.255\)/);
    for (const flag of ['--version', '-v']) {
      const version = await runRelay([flag]);
      expect(version).toEqual({ code: 0, stdout: expect.stringMatching(/^wmp-relay \d+\.\d+\.\d+\S*\n$/), stderr: '' });
    }
    const help = await runRelay(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(helpText());
    // Three process starts in a row: generous on a loaded machine.
  }, 90_000);
});

describe('parseConfig: federation', () => {
  it('takes repeatable --route, --peer, --peer-trust and the mode, by flag or by variable', () => {
    const byFlag = ok(
      parse([
        '--federation',
        'open',
        '--route',
        'did:key:z6Mkabc=https://r2.example',
        '--route',
        'did:web:corp.example*=https://r3.example/wmp',
        '--peer',
        'https://r2.example',
        '--peer-trust',
        'http://127.0.0.1:9000',
        '--erds-consignment-modes',
        'basic',
      ]),
    ).federation;
    expect(byFlag).toEqual({
      mode: 'open',
      routes: [
        { pattern: 'did:key:z6Mkabc', url: 'https://r2.example' },
        { pattern: 'did:web:corp.example*', url: 'https://r3.example/wmp' },
      ],
      peers: ['https://r2.example'],
      trustedPeers: ['http://127.0.0.1:9000'],
      erds: { consignment_modes: ['basic'] },
      allowPrivatePeers: false,
    });
    const byEnv = ok(
      parse([], {
        WMP_FEDERATION: 'off',
        WMP_ROUTES: 'a=https://r2.example, b*=https://r3.example',
        WMP_PEERS: 'https://r2.example https://r3.example',
      }),
    ).federation;
    expect(byEnv.mode).toBe('off');
    expect(byEnv.routes).toHaveLength(2);
    expect(byEnv.peers).toEqual(['https://r2.example', 'https://r3.example']);
  });

  it('refuses a bad mode, route or peer, naming the flag or the variable', () => {
    expect(error(parse(['--federation', 'closed']))).toContain('--federation');
    expect(error(parse([], { WMP_FEDERATION: 'x' }))).toContain('WMP_FEDERATION');
    expect(error(parse(['--route', 'no-url']))).toContain('--route');
    expect(error(parse(['--route', 'a=http://relay.example']))).toContain('--route');
    expect(error(parse([], { WMP_ROUTES: 'a=ftp://x' }))).toContain('WMP_ROUTES');
    expect(error(parse(['--peer', 'http://relay.example']))).toContain('--peer');
    // Plain http on loopback is an address: `127.attacker.example` is no loopback host.
    expect(error(parse(['--peer', 'http://127.attacker.example']))).toContain('--peer');
    expect(error(parse([], { WMP_PEER_TRUST: 'nope' }))).toContain('WMP_PEER_TRUST');
  });
});

describe('parseConfig: evidence', () => {
  it('takes --evidence, --evidence-retention, --tsa-url with --tsa-anchors and --relay-chain-signatures', () => {
    const c = ok(
      parse(['--evidence', 'off', '--evidence-retention', 'P10Y', '--tsa-url', 'http://127.0.0.1:9/tsa'], {
        WMP_TSA_ANCHORS: 'tsa-root.pem',
        WMP_RELAY_CHAIN_SIGNATURES: 'always',
      }),
    );
    expect(c.evidence).toEqual({
      enabled: false,
      retention: 'P10Y',
      tsa: { url: 'http://127.0.0.1:9/tsa', anchorsFile: 'tsa-root.pem' },
      relayChainSignatures: 'always',
    });
    expect(ok(parse([], { WMP_EVIDENCE: 'on' })).evidence.enabled).toBe(true);
  });

  it('refuses a bad value, naming the flag or the variable', () => {
    expect(error(parse(['--evidence', 'yes']))).toContain('--evidence: "yes" is not on or off');
    expect(error(parse(['--evidence-retention', '5 years']))).toContain('--evidence-retention');
    expect(error(parse([], { WMP_EVIDENCE_RETENTION: 'P' }))).toContain('WMP_EVIDENCE_RETENTION');
    expect(error(parse(['--relay-chain-signatures', 'never']))).toContain('--relay-chain-signatures');
    expect(error(parse(['--tsa-url', 'http://127.0.0.1:9/tsa']))).toContain('go together');
    expect(error(parse(['--tsa-anchors', 'root.pem']))).toContain('go together');
    expect(error(parse(['--tsa-url', 'ftp://tsa', '--tsa-anchors', 'root.pem']))).toContain('--tsa-url');
  });
});
