// Help text generated from the command table (the table that also dispatches), so help and
// behaviour cannot drift: `wmp --help`, `wmp <group> --help`, `wmp <command> --help`.
import { type CommandSpec, type CommandTable, commandName, type OptionSpec } from './command.js';
import { ExitCode } from './errors.js';
import { GLOBAL_OPTIONS, type HelpTopic } from './parse.js';
import { PLACEHOLDER } from './values.js';

const EXIT_CODE_HELP: readonly [number, string][] = [
  [ExitCode.ok, 'ok'],
  [ExitCode.failure, 'failed (refused by a relay or box, bad data, a file problem)'],
  [ExitCode.usage, 'usage error (unknown command or option, bad argument)'],
  [ExitCode.notFound, 'not found (no identity yet, no card for that key, unknown group or flow)'],
  [ExitCode.unreachable, 'unreachable (a relay or box could not be reached or dropped the connection)'],
  [ExitCode.tls, "TLS (the relay's certificate is not trusted, or it refused ours: see --ca-file, --client-cert)"],
  [ExitCode.interrupted, 'interrupted (Ctrl-C)'],
];

/** `<did> <text...> [name]` */
export function usageArgs(spec: CommandSpec): string {
  return (spec.args ?? [])
    .map((a) => {
      const inner = `<${a.name}${a.rest || a.list ? '...' : ''}>`;
      return a.optional ? `[${inner}]` : inner;
    })
    .join(' ');
}

export function usageLine(spec: CommandSpec, prefix = 'wmp'): string {
  const args = usageArgs(spec);
  const hasOptions = Object.keys(spec.options ?? {}).length > 0;
  return [prefix, commandName(spec), hasOptions ? '[options]' : '', args].filter(Boolean).join(' ');
}

function optionFlag(name: string, o: OptionSpec): string {
  const value = o.kind === 'flag' ? '' : ` <${o.placeholder ?? PLACEHOLDER[o.kind]}>`;
  return `${o.short ? `-${o.short}, ` : ''}--${name}${value}`;
}

function optionText(o: OptionSpec): string {
  const extra = [
    o.multiple ? 'repeatable' : '',
    o.default !== undefined ? `default: ${o.default}` : '',
    o.kind === 'int' && o.min !== undefined && o.max !== undefined ? `${o.min}..${o.max}` : '',
  ].filter(Boolean);
  return `${o.help}${extra.length ? ` (${extra.join('; ')})` : ''}`;
}

function table(rows: readonly [string, string][], indent = '  '): string[] {
  const width = Math.max(0, ...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${indent}${a.padEnd(width)}  ${b}`.trimEnd());
}

/** Rows `keys new` / summary for a list of commands. */
export function commandRows(specs: readonly CommandSpec[], prefix = ''): [string, string][] {
  return specs.map((s) => [`${prefix}${commandName(s)} ${usageArgs(s)}`.trimEnd(), s.summary]);
}

function globalOptionRows(): [string, string][] {
  return Object.entries(GLOBAL_OPTIONS).map(([name, o]) => [optionFlag(name, o), optionText(o)]);
}

export function topHelp(commands: CommandTable): string {
  const specs = [...commands.values()].flatMap((e) => (e.kind === 'command' ? [e.spec] : [...e.commands.values()]));
  return [
    'Usage: wmp [--home <dir>] [--json] <command> [options] [arguments]',
    '',
    'WMP from the command line: keys and cards, live messages through a relay, sealed offline',
    'mail (OHAN), allow lists, MLS groups, flows, and an interactive session (wmp connect).',
    '',
    'Commands:',
    ...table(commandRows(specs)),
    '',
    'Global options (any command):',
    ...table([...globalOptionRows(), ['--version', 'print the version (wmp --version)']]),
    '',
    'Exit codes:',
    ...table(EXIT_CODE_HELP.map(([c, t]) => [String(c), t])),
    '',
    'Run "wmp <command> --help" for the options and examples of one command.',
    '',
  ].join('\n');
}

export function groupHelp(commands: CommandTable, name: string): string {
  const entry = commands.get(name);
  if (entry?.kind !== 'group') throw new Error(`no group ${name}`);
  return [
    `Usage: wmp ${name} <command> [options]`,
    '',
    `${entry.spec.summary}.`,
    '',
    'Commands:',
    ...table(commandRows([...entry.commands.values()])),
    '',
    `Run "wmp ${name} <command> --help" for its options and examples.`,
    '',
  ].join('\n');
}

export function commandHelp(spec: CommandSpec, prefix = 'wmp'): string {
  const out = [`Usage: ${usageLine(spec, prefix)}`, '', `${capitalise(spec.summary)}.`];
  if (spec.description) out.push('', ...spec.description);
  const args = spec.args ?? [];
  if (args.length > 0) {
    out.push('', 'Arguments:', ...table(args.map((a) => [`<${a.name}${a.rest || a.list ? '...' : ''}>`, a.help])));
  }
  const options = Object.entries(spec.options ?? {});
  if (options.length > 0) {
    out.push('', 'Options:', ...table(options.map(([n, o]) => [optionFlag(n, o), optionText(o)])));
  }
  if (prefix === 'wmp') out.push('', 'Global options:', ...table(globalOptionRows()));
  if ((spec.examples ?? []).length > 0) out.push('', 'Examples:', ...(spec.examples ?? []).map((e) => `  ${e}`));
  out.push('');
  return out.join('\n');
}

export function helpFor(topic: HelpTopic, commands: CommandTable): string {
  if (topic.kind === 'top') return topHelp(commands);
  if (topic.kind === 'group') return groupHelp(commands, topic.name);
  return commandHelp(topic.spec);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
