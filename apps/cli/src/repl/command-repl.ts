// A REPL over a command table, shared by `wmp connect` (a session with the relay) and `wmp connect
// <identifier>` (a session end to end with another party): lines parsed against the table and
// run with the live client, their output (and everything the session prints meanwhile) above the
// prompt on a terminal, history in the home, errors shown with REPL hints.
import type { CommandContext, CommandTable, LiveSession } from '../command.js';
import { UsageError } from '../errors.js';
import { commandHelp, commandRows } from '../help.js';
import { Output } from '../output.js';
import { parseCommandLine } from '../parse.js';
import type { TextSink } from '../text-sink.js';
import { toCliError } from '../to-cli-error.js';
import { VERSION } from '../version.js';
import { Repl } from './repl.js';
import { splitWords } from './words.js';

export interface CommandRepl {
  /** Prints above the prompt (stdout and stderr alike while the REPL runs). */
  readonly out: Output;
  /** Runs until the input ends, `quit`, Ctrl-D, or `stop` aborts. */
  run(): Promise<void>;
}

export interface CommandReplOptions {
  readonly table: () => CommandTable;
  readonly live: LiveSession;
  readonly prompt: string;
  /** Ends the loop (the connection is gone for good). */
  readonly stop: AbortSignal;
  /** Whether the line that just ran asked to quit. */
  readonly quitting: () => boolean;
}

export function formatRows(rows: readonly [string, string][]): string[] {
  const width = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`);
}

/** A usage error's hint in REPL words (`help send`, not `wmp send --help`). */
export function replHint(hint: string | undefined): string | undefined {
  return hint?.replace(/Run: wmp ((?:\S+ )*)--help/, (_m, c: string) => `Type: help ${c}`.trimEnd());
}

export function commandRepl(ctx: CommandContext, options: CommandReplOptions): CommandRepl {
  const { stdout, stderr } = ctx;
  const terminal = Boolean((ctx.stdin as { isTTY?: boolean }).isTTY && stdout.isTTY);
  let repl: Repl;
  // Everything printed while the REPL runs goes above the prompt (stdout and stderr alike).
  const sink = (target: NodeJS.WritableStream): TextSink => ({
    write: (text: string) => (terminal ? repl.print(text) : target.write(text)),
    isTTY: false,
  });
  const out = new Output({ stdout: sink(stdout), stderr: sink(stderr) }, { json: ctx.out.json });
  repl = new Repl({
    input: ctx.stdin,
    output: stdout,
    terminal,
    historyFile: ctx.home.historyFile,
    prompt: options.prompt,
    signal: options.stop,
    onLine: async (line) => {
      try {
        const parsed = parseCommandLine(splitWords(line), options.table());
        if (parsed.kind === 'no-command') throw new UsageError('no command given', undefined, 'Type: help');
        if (parsed.kind === 'help') {
          const spec = parsed.topic.kind === 'command' ? parsed.topic.spec : undefined;
          out.raw(spec ? commandHelp(spec, '') : 'Type: help\n');
          return undefined;
        }
        if (parsed.kind === 'version') {
          out.result({ version: VERSION }, () => `wmp ${VERSION}`);
          return undefined;
        }
        if (parsed.globals.home !== undefined || parsed.globals.json || Object.keys(parsed.globals.tls).length > 0) {
          throw new UsageError('the global options are chosen when wmp connect starts', undefined, 'Type: help');
        }
        await parsed.spec.run({
          ...ctx,
          command: parsed.spec,
          args: parsed.args,
          options: parsed.options,
          out,
          live: options.live,
        });
      } catch (error) {
        const e = toCliError(error);
        out.error(e instanceof UsageError ? new UsageError(e.message, undefined, replHint(e.hint)) : e);
      }
      return options.quitting() ? 'quit' : undefined;
    },
  });
  return { out, run: () => repl.run() };
}

/** `help [command]` for a REPL table: the list of its commands, or one command's help. */
export function helpCommandRun(table: () => CommandTable) {
  return async ({ args, out }: Pick<CommandContext, 'args' | 'out'>): Promise<void> => {
    const words = typeof args.command === 'string' ? args.command.split(' ') : [];
    if (words.length === 0) {
      const specs = [...table().values()].flatMap((e) => (e.kind === 'command' ? [e.spec] : [...e.commands.values()]));
      out.raw(
        [
          'Commands (Ctrl-D or quit to leave; a line starting with a space is kept out of the history):',
          ...formatRows(commandRows(specs)),
          'Type "help <command>" for its options and examples.',
          '',
        ].join('\n'),
      );
      return;
    }
    const entry = table().get(words[0]!);
    const spec =
      entry?.kind === 'command' ? entry.spec : entry?.kind === 'group' ? entry.commands.get(words[1] ?? '') : undefined;
    if (!spec) {
      if (entry?.kind === 'group') {
        out.raw(`${formatRows(commandRows([...entry.commands.values()])).join('\n')}\n`);
        return;
      }
      throw new UsageError(`no command "${words.join(' ')}"`, undefined, 'Type: help');
    }
    out.raw(commandHelp(spec, ''));
  };
}
