// argv -> the command to run with its checked arguments and options, or a help request. Built on
// `node:util` parseArgs (strict), driven by the command table, so every command accepts exactly
// what its help lists.
import { parseArgs } from 'node:util';
import type { ArgValue, CommandSpec, CommandTable, OptionSpec, OptionValue, TlsFlags } from './command.js';
import { commandName } from './command.js';
import { UsageError } from './errors.js';
import { CONVERT, ValueError } from './values.js';

/** Options every command takes (before or after the command words). */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  home: {
    kind: 'path',
    placeholder: 'dir',
    help: 'config directory with your identity and state',
    default: '$WMP_HOME, else $XDG_CONFIG_HOME/wmp, else ~/.config/wmp',
  },
  json: { kind: 'flag', help: 'machine-readable output: one JSON value per line on stdout, errors as JSON on stderr' },
  'ca-file': {
    kind: 'path',
    help: "trust this CA (PEM) for https:// relays, besides the system's (a private CA)",
    default: '$WMP_CA_FILE',
  },
  'client-cert': {
    kind: 'path',
    help: 'TLS client certificate chain (PEM, leaf first) for relays that ask for one (mTLS); with --client-key',
    default: 'the X.509 certificate of wmp keys import --cert, if any',
  },
  'client-key': { kind: 'path', help: 'the PKCS#8 key (PEM) of --client-cert' },
  mtls: {
    kind: 'flag',
    help: 'authenticate your X.509 identity by its TLS client certificate (a relay that asks for one) instead of x5c',
  },
  help: { kind: 'flag', short: 'h', help: 'show help for wmp or for a command' },
};

/** Options only the bare `wmp` takes. */
const TOP_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  version: { kind: 'flag', help: 'print the version' },
};

export interface Globals {
  readonly home: string | undefined;
  readonly json: boolean;
  readonly tls: TlsFlags;
}

export type ParsedCommandLine =
  | {
      readonly kind: 'run';
      readonly spec: CommandSpec;
      readonly args: Record<string, ArgValue>;
      readonly options: Record<string, OptionValue>;
      readonly globals: Globals;
    }
  | { readonly kind: 'help'; readonly topic: HelpTopic; readonly globals: Globals }
  | { readonly kind: 'version'; readonly globals: Globals }
  /** No command given (and no --help): the usage goes to stderr with exit 2. */
  | { readonly kind: 'no-command'; readonly globals: Globals };

/** What help was asked for: everything, one group, or one command. */
export type HelpTopic =
  | { readonly kind: 'top' }
  | { readonly kind: 'group'; readonly name: string }
  | { readonly kind: 'command'; readonly spec: CommandSpec };

/** Whether `--json` appears before any `--` (so even a usage error can be written as JSON). */
export function wantsJson(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json') return true;
  }
  return false;
}

function isOption(word: string): boolean {
  return word.startsWith('-') && word !== '-';
}

/** Index of the next command word at or after `from`, skipping global options (and `--home`'s value). */
function nextWord(argv: readonly string[], from: number, where: string): number {
  for (let i = from; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return -1;
    if (!isOption(a)) return i;
    const name = a.replace(/^--?/, '').split('=')[0]!;
    const global = Object.entries(GLOBAL_OPTIONS).find(([k, o]) => k === name || o.short === name);
    if (!global && !(where === 'wmp' && name in TOP_OPTIONS)) {
      throw new UsageError(`${a} goes after the command (only the global options may come before it: wmp --help)`);
    }
    if (global && global[1].kind !== 'flag' && !a.includes('=')) i++;
  }
  return -1;
}

function parseArgsOptions(specs: Readonly<Record<string, OptionSpec>>) {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, o] of Object.entries(specs)) {
    options[name] = {
      type: o.kind === 'flag' ? 'boolean' : 'string',
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  return options;
}

/** parseArgs' TypeErrors (ERR_PARSE_ARGS_*) as usage errors that name the option. */
function parseArgsError(error: unknown, command: string | undefined): never {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) throw error;
  const message = (error as Error).message;
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) throw new UsageError(`unknown option ${option}`, command);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    throw new UsageError(`${option} ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'}`, command);
  }
  throw new UsageError(message.split('\n')[0]!, command);
}

function convert(spec: OptionSpec | { kind: OptionSpec['kind'] }, text: string, label: string, command: string) {
  if (spec.kind === 'flag') return text;
  try {
    const limits = spec as OptionSpec;
    return CONVERT[spec.kind](text, { min: limits.min, max: limits.max });
  } catch (error) {
    if (error instanceof ValueError) throw new UsageError(`${label}: ${error.message}`, command);
    throw error;
  }
}

/** Parses a whole command line against `table`. Throws `UsageError` for anything that does not fit. */
export function parseCommandLine(argv: readonly string[], table: CommandTable): ParsedCommandLine {
  const first = nextWord(argv, 0, 'wmp');
  if (first < 0) {
    // No command: only global options (and --version) are allowed.
    const { values } = parseWith(argv, { ...GLOBAL_OPTIONS, ...TOP_OPTIONS }, undefined);
    const globals = globalsOf(values);
    if (values.version === true) return { kind: 'version', globals };
    if (values.help === true) return { kind: 'help', topic: { kind: 'top' }, globals };
    return { kind: 'no-command', globals };
  }
  const word = argv[first]!;
  const entry = table.get(word);
  if (!entry) throw new UsageError(`unknown command "${word}"`, undefined, suggest(word, [...table.keys()]));
  const rest = [...argv.slice(0, first), ...argv.slice(first + 1)];

  let spec: CommandSpec;
  let remaining: string[];
  if (entry.kind === 'group') {
    const second = nextWord(rest, first, entry.spec.name);
    if (second < 0) {
      const { values } = parseWith(rest, GLOBAL_OPTIONS, entry.spec.name);
      if (values.help === true)
        return { kind: 'help', topic: { kind: 'group', name: word }, globals: globalsOf(values) };
      throw new UsageError(`"${word}" needs a subcommand: ${[...entry.commands.keys()].join(', ')}`, word);
    }
    const sub = entry.commands.get(rest[second]!);
    if (!sub) {
      throw new UsageError(
        `unknown command "${word} ${rest[second]}"`,
        word,
        suggest(rest[second]!, [...entry.commands.keys()], word),
      );
    }
    spec = sub;
    remaining = [...rest.slice(0, second), ...rest.slice(second + 1)];
  } else {
    spec = entry.spec;
    remaining = rest;
  }

  const name = commandName(spec);
  const optionSpecs = { ...GLOBAL_OPTIONS, ...spec.options };
  const { values, positionals } = parseWith(remaining, optionSpecs, name);
  const globals = globalsOf(values);
  if (values.help === true) return { kind: 'help', topic: { kind: 'command', spec }, globals };

  const args: Record<string, ArgValue> = {};
  const argSpecs = spec.args ?? [];
  let p = 0;
  for (const a of argSpecs) {
    if (a.list) {
      const words = positionals.slice(p);
      p = positionals.length;
      if (words.length === 0 && !a.optional) throw new UsageError(`missing <${a.name}>`, name);
      args[a.name] = words.map((w) => String(convert({ kind: a.kind ?? 'text' }, w, `<${a.name}>`, name)));
      continue;
    }
    if (a.rest) {
      const words = positionals.slice(p);
      p = positionals.length;
      if (words.length === 0) {
        if (!a.optional) throw new UsageError(`missing <${a.name}>`, name);
        continue;
      }
      args[a.name] = convert({ kind: a.kind ?? 'text' }, words.join(' '), `<${a.name}>`, name);
      continue;
    }
    const text = positionals[p++];
    if (text === undefined) {
      if (!a.optional) throw new UsageError(`missing <${a.name}>`, name);
      continue;
    }
    args[a.name] = convert({ kind: a.kind ?? 'text' }, text, `<${a.name}>`, name);
  }
  if (p < positionals.length) throw new UsageError(`unexpected argument "${positionals[p]}"`, name);

  const options: Record<string, OptionValue> = {};
  for (const [key, o] of Object.entries(spec.options ?? {})) {
    const v = values[key];
    if (v === undefined) continue;
    if (o.kind === 'flag') options[key] = v === true;
    else if (Array.isArray(v)) options[key] = v.map((t) => String(convert(o, String(t), `--${key}`, name)));
    else options[key] = convert(o, v as string, `--${key}`, name);
  }
  return { kind: 'run', spec, args, options, globals };
}

/**
 * An option's value that starts with a dash (a base64url hash does, one time in 64) joined to its
 * option (`--content-hash -x...` as `--content-hash=-x...`): parseArgs refuses it as ambiguous.
 * A next word that is an option of the command stays an option (the value is missing then).
 */
function valuesJoined(argv: readonly string[], specs: Readonly<Record<string, OptionSpec>>): string[] {
  const known = (word: string) => {
    const name = word.replace(/^--?/, '').split('=')[0]!;
    return word.startsWith('--') ? name in specs : Object.values(specs).some((o) => o.short === name);
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const next = argv[i + 1];
    out.push(word);
    if (word === '--') {
      out.push(...argv.slice(i + 1));
      break;
    }
    if (!word.startsWith('--') || word.includes('=') || next === undefined || next === '--') continue;
    const spec = specs[word.slice(2)];
    if (spec === undefined || spec.kind === 'flag' || !isOption(next) || known(next)) continue;
    out[out.length - 1] = `${word}=${next}`;
    i++;
  }
  return out;
}

function parseWith(argv: readonly string[], specs: Readonly<Record<string, OptionSpec>>, command: string | undefined) {
  try {
    return parseArgs({
      args: valuesJoined(argv, specs),
      options: parseArgsOptions(specs),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return parseArgsError(error, command);
  }
}

function globalsOf(values: Record<string, unknown>): Globals {
  const home = values.home;
  if (typeof home === 'string' && home.trim() === '') throw new UsageError('--home: is empty; give a directory');
  const file = (name: string): string | undefined => {
    const v = values[name];
    if (typeof v === 'string' && v.trim() === '') throw new UsageError(`--${name}: is empty; give a file`);
    return typeof v === 'string' ? v : undefined;
  };
  const caFile = file('ca-file');
  const clientCert = file('client-cert');
  const clientKey = file('client-key');
  if ((clientCert === undefined) !== (clientKey === undefined)) {
    throw new UsageError('--client-cert and --client-key go together');
  }
  const tls: TlsFlags = {
    ...(caFile === undefined ? {} : { caFile }),
    ...(clientCert === undefined ? {} : { clientCert }),
    ...(clientKey === undefined ? {} : { clientKey }),
    ...(values.mtls === true ? { mtls: true } : {}),
  };
  return { home: typeof home === 'string' ? home : undefined, json: values.json === true, tls };
}

/** `Run: wmp --help`, plus the closest known name when one is near (a typo). */
function suggest(word: string, names: readonly string[], group?: string): string {
  const near = names
    .map((n) => ({ n, d: distance(word, n) }))
    .filter((x) => x.d <= 2)
    .sort((a, b) => a.d - b.d)[0];
  const help = `Run: wmp ${group ? `${group} ` : ''}--help`;
  return near ? `Did you mean "${group ? `${group} ` : ''}${near.n}"? ${help}` : help;
}

/** Levenshtein distance (names are short). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}
