// The relay's settings: every one from a flag or an environment variable (flag first, then the
// variable, then the default), checked once at startup. Pure: no I/O, no process access. The
// option table is config-options.ts, the value checks config-values.ts.
import { parseArgs } from 'node:util';
import { OHAN_API_PATH } from '@wmp/ohan-seal';
import { DEFAULT_RELAY_TIMINGS, type LogLevel } from '@wmp/relay-server';
import { authSettings } from './auth-config.js';
import { parseConfigFile, settingsAsEnv } from './config-file.js';
import { defaultOf, envName, envOf, MiB, OPTIONS } from './config-options.js';
import type { OptionSpec } from './config-spec.js';
import type { AppConfig, ParseResult } from './config-types.js';
import {
  ConfigError,
  checkHost,
  checkPublicUrl,
  clusterSettings,
  federationOf,
  listOf,
  NODE_ID,
  parseBool,
  parseInteger,
  relayKeySource,
  trustedProxyList,
} from './config-values.js';
import { evidenceSettings } from './evidence-settings.js';
import { registeredSettings } from './registered-config.js';

export { type FileSettings, parseConfigFile } from './config-file.js';
export { envName } from './config-options.js';
export type { BoxSettings, OptionSpec } from './config-spec.js';
export {
  type AppConfig,
  type ClusterSettings,
  EXIT_USAGE,
  type ParseResult,
  type RelayKeySource,
} from './config-types.js';

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The did:web-only flag became the one flag of every fetch on a client's behalf (docs/decisions/0301). */
const RENAMED_ALLOW_PRIVATE =
  '--did-web-allow-private (WMP_DID_WEB_ALLOW_PRIVATE) was replaced by --allow-private-peers (WMP_ALLOW_PRIVATE_PEERS): it covers did:web and federation alike';

export interface ParseOptions {
  /** Reads a `--config` file (main.ts passes `readFileSync`); without it `--config` is refused. */
  readonly readFile?: (path: string) => string;
}

/** `--config FILE` / `--config=FILE`, else `WMP_CONFIG`. */
function configFileOf(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') break;
    if (argv[i] === '--config') return argv[i + 1];
    if (argv[i]!.startsWith('--config=')) return argv[i]!.slice('--config='.length);
  }
  return env.WMP_CONFIG === '' ? undefined : env.WMP_CONFIG;
}

/**
 * The environment with a config file's settings under it: flag first, then the environment
 * variable, then the file, then the default. `keys` names the file key behind each variable.
 */
function withConfigFile(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  options: ParseOptions,
): { env: Readonly<Record<string, string | undefined>>; file?: string; keys?: Map<string, string> } {
  const file = configFileOf(argv, env);
  if (file === undefined || file === '') return { env };
  if (options.readFile === undefined) throw new ConfigError('--config: this caller reads no files');
  let text: string;
  try {
    text = options.readFile(file);
  } catch (error) {
    throw new ConfigError(`--config ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const layer = settingsAsEnv(parseConfigFile(text, file), file, OPTIONS, envOf);
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  return { env: { ...layer.env, ...given }, file, keys: layer.keys };
}

/**
 * Parses `argv` (without `node` and the script) and `env`: flag first, then the environment
 * variable, then the `--config` file (when `options.readFile` can read it), then the default. An
 * empty environment variable counts as unset.
 */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  options: ParseOptions = {},
): ParseResult {
  let layered: ReturnType<typeof withConfigFile> | undefined;
  try {
    layered = withConfigFile(argv, env, options);
    return parseOrThrow(argv, layered.env);
  } catch (error) {
    if (error instanceof ConfigError && layered?.keys !== undefined) {
      // A value from the file: name the file and its key, not the variable it stood for.
      const variable = /^(WMP_[A-Z0-9_]+)[:= ]/.exec(error.message)?.[1];
      const key = variable === undefined || env[variable] ? undefined : layered.keys.get(variable);
      if (key !== undefined) {
        return { kind: 'error', message: `--config ${layered.file}: ${key}${error.message.slice(variable!.length)}` };
      }
    }
    if (error instanceof ConfigError) return { kind: 'error', message: error.message };
    // parseArgs reports unknown flags and missing values with a TypeError and an ERR_PARSE_ARGS_* code.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      const message = (error as Error).message;
      const option = /'(-[^' ]+)/.exec(message)?.[1];
      if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option === '--did-web-allow-private') {
        return { kind: 'error', message: RENAMED_ALLOW_PRIVATE };
      }
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
    version: { type: 'boolean', short: 'v' },
  };
  for (const spec of OPTIONS) {
    options[spec.flag] =
      spec.kind === 'list' ? { type: 'string', multiple: true } : { type: spec.kind === 'bool' ? 'boolean' : 'string' };
  }
  const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  if (values.help) return { kind: 'help', text: helpText() };
  if (values.version) return { kind: 'version' };
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

  if (env.WMP_DID_WEB_ALLOW_PRIVATE !== undefined && env.WMP_DID_WEB_ALLOW_PRIVATE !== '') {
    throw new ConfigError(RENAMED_ALLOW_PRIVATE);
  }
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
  const trustedProxies = trustedProxyList(raw('trusted-proxies'));
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
  const policyRaw = raw('assertion-policy');
  if (policyRaw !== undefined && policyRaw.text.trim() === '') {
    throw new ConfigError(`${policyRaw.fromEnv ? 'WMP_ASSERTION_POLICY' : '--assertion-policy'}: must not be empty`);
  }

  const config: AppConfig = {
    federation: { ...federationOf(values, env, raw), allowPrivatePeers: bool('allow-private-peers') ?? false },
    evidence: evidenceSettings(raw),
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
    demo: bool('demo') ?? false,
    cluster,
    nodeId: nodeRaw?.text,
    relayKey,
    limits,
    timings,
    box,
    ...(policyRaw === undefined ? {} : { assertionPolicyFile: policyRaw.text }),
    registered: registeredSettings(
      {
        text: (flag) => raw(flag)?.text,
        list: (flag) => listOf(flag, values, env).items,
        bool,
        number: (flag) => given(OPTIONS.find((o) => o.flag === flag)!),
      },
      (message) => {
        throw new ConfigError(message);
      },
    ),
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
    // A default named by another flag (`<--max-message-bytes>`) is shown as it is.
    const shown = o.kind === 'bytes' && Number.isFinite(Number(value)) ? bytesText(Number(value)) : value;
    return { flag, env, text: `${o.help} (default: ${shown})` };
  });
  const w1 = Math.max(...rows.map((r) => r.flag.length));
  const w2 = Math.max(...rows.map((r) => r.env.length));
  return [
    'Usage: wmp-relay [options]',
    '       wmp-relay admin <command> [options]   (wmp-relay admin --help)',
    '',
    `The WMP relay: WebSocket and HTTP+SSE at /wmp, the OHAN box at ${OHAN_API_PATH}, /health and /metrics on one port.`,
    'Every option can also be set by its environment variable; a flag wins over the variable.',
    'Byte sizes take an optional binary unit: 512KiB, 16MiB, 1GiB (or k, m, g).',
    '',
    ...rows.map((r) => `  ${r.flag.padEnd(w1)}  ${r.env.padEnd(w2)}  ${r.text}`),
    `  ${'-v, --version'.padEnd(w1)}  ${''.padEnd(w2)}  print the version`,
    `  ${'-h, --help'.padEnd(w1)}  ${''.padEnd(w2)}  this text`,
    '',
  ].join('\n');
}
