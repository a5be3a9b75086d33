// The shape of the command table: one entry per command with its arguments, options, examples and
// handler. The parser, `--help` and the REPL's `help` are all generated from these entries.
import type { Group, WmpClient } from '@wmp/client-sdk';
import type { Home } from './home.js';
import type { Output } from './output.js';
import type { TextSink } from './text-sink.js';

/** The TLS options of the command line (the files are read when a command first connects). */
export interface TlsFlags {
  readonly caFile?: string;
  readonly clientCert?: string;
  readonly clientKey?: string;
  /** Authenticate an X.509 identity by its TLS client certificate (`mtls`) instead of `x5c`. */
  readonly mtls?: boolean;
}

/** An output stream that is also a TextSink (process.stdout, or a PassThrough in tests). */
export type Stream = NodeJS.WritableStream & TextSink;

import type { ValueKind } from './values.js';

export interface ArgSpec {
  readonly name: string;
  readonly help: string;
  readonly kind?: ValueKind;
  readonly optional?: boolean;
  /** Takes every remaining word, joined with single spaces (message text). Last argument only. */
  readonly rest?: boolean;
  /** Takes every remaining word as a list of values of `kind` (one or more). Last argument only. */
  readonly list?: boolean;
}

export interface OptionSpec {
  readonly help: string;
  /** `flag`: a switch without a value; anything else takes a value of that kind. */
  readonly kind: ValueKind | 'flag';
  readonly short?: string;
  /** The value's name in help when the kind's own does not fit (`--home <dir>`). */
  readonly placeholder?: string;
  /** May be given more than once (`--relay A --relay B`). */
  readonly multiple?: boolean;
  /** The default as shown in help (the handler applies it). */
  readonly default?: string;
  /** Smallest and largest value of an `int`. */
  readonly min?: number;
  readonly max?: number;
}

export type ArgValue = string | number | readonly string[] | undefined;

export type OptionValue = string | number | boolean | readonly string[] | undefined;

/** What a handler gets: parsed arguments and options, the home, the output and a stop signal. */
export interface CommandContext {
  readonly command: CommandSpec;
  readonly args: Readonly<Record<string, ArgValue>>;
  readonly options: Readonly<Record<string, OptionValue>>;
  readonly home: Home;
  readonly out: Output;
  /** Aborted on Ctrl-C: long-running commands stop cleanly. */
  readonly signal: AbortSignal;
  /** Standard input (the REPL reads it; `keys import -` too). */
  readonly stdin: NodeJS.ReadableStream;
  /** The raw output streams, for the REPL's line editor; everything else prints through `out`. */
  readonly stdout: Stream;
  readonly stderr: Stream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--ca-file`, `--client-cert`, `--client-key` as given (read by `tlsOptions` when connecting). */
  readonly tlsFlags: TlsFlags;
  /** Inside `wmp connect`: the session's connected client, which live commands use instead of connecting. */
  readonly live?: LiveSession | undefined;
}

/** The REPL's connection, shared with the commands run in it. */
export interface LiveSession {
  readonly client: WmpClient;
  readonly relay: string;
  /** The groups the session keeps running (by group session id): commands use them and add to them, never close them. */
  readonly groups: Map<string, Group>;
}

export interface CommandSpec {
  /** The words that name it: `['keys', 'new']`, `['send']`. */
  readonly path: readonly string[];
  /** One line, lower case, no full stop: shown in lists. */
  readonly summary: string;
  /** Lines shown by `wmp <command> --help` (an empty string separates paragraphs). */
  readonly description?: readonly string[];
  readonly args?: readonly ArgSpec[];
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** Full command lines, shown in help and in the README. */
  readonly examples?: readonly string[];
  readonly run: (ctx: CommandContext) => Promise<void>;
}

/** Commands under one word (`keys`, `mail`, ...). */
export interface GroupSpec {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandSpec[];
}

export type TableEntry = { readonly kind: 'command'; readonly spec: CommandSpec } | GroupEntry;

export interface GroupEntry {
  readonly kind: 'group';
  readonly spec: GroupSpec;
  readonly commands: ReadonlyMap<string, CommandSpec>;
}

/** The dispatch table: first word -> a command, or a group of commands by second word. */
export type CommandTable = ReadonlyMap<string, TableEntry>;

export function commandName(spec: CommandSpec): string {
  return spec.path.join(' ');
}

/** Builds the table from top-level commands and groups; a duplicate name is a programming error. */
export function buildTable(entries: readonly (CommandSpec | GroupSpec)[]): CommandTable {
  const table = new Map<string, TableEntry>();
  for (const entry of entries) {
    if ('commands' in entry) {
      const commands = new Map<string, CommandSpec>();
      for (const c of entry.commands) {
        if (c.path.length !== 2 || c.path[0] !== entry.name || commands.has(c.path[1]!)) {
          throw new Error(`bad command path ${commandName(c)} in group ${entry.name}`);
        }
        commands.set(c.path[1]!, c);
      }
      if (table.has(entry.name)) throw new Error(`duplicate command ${entry.name}`);
      table.set(entry.name, { kind: 'group', spec: entry, commands });
    } else {
      if (entry.path.length !== 1 || table.has(entry.path[0]!)) {
        throw new Error(`bad command path ${commandName(entry)}`);
      }
      table.set(entry.path[0]!, { kind: 'command', spec: entry });
    }
  }
  return table;
}

/** Every command of the table, in table order. */
export function allCommands(table: CommandTable): CommandSpec[] {
  return [...table.values()].flatMap((e) => (e.kind === 'command' ? [e.spec] : [...e.commands.values()]));
}
