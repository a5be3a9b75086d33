// The runner: parse the command line against the table, run the handler, turn whatever it throws
// into a CliError with an exit code, and write help, results and errors through Output.
import type { CommandTable, Stream } from './command.js';
import { COMMANDS } from './commands/index.js';
import { type CliError, ExitCode, InterruptedError, UsageError } from './errors.js';
import { helpFor } from './help.js';
import { Home, resolveHomeDir } from './home.js';
import { Output, type OutputStreams } from './output.js';
import { parseCommandLine, wantsJson } from './parse.js';
import { toCliError } from './to-cli-error.js';
import { VERSION } from './version.js';

export interface CliIo extends OutputStreams {
  readonly stdout: Stream;
  readonly stderr: Stream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
}

/** Runs one command line and resolves with the process exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo, table: CommandTable = COMMANDS): Promise<number> {
  let out = new Output(io, { json: wantsJson(argv) });
  try {
    const parsed = parseCommandLine(argv, table);
    out = new Output(io, { json: parsed.globals.json });
    if (parsed.kind === 'version') {
      out.result({ version: VERSION }, () => `wmp ${VERSION}`);
      return ExitCode.ok;
    }
    if (parsed.kind === 'help') {
      out.raw(helpFor(parsed.topic, table));
      return ExitCode.ok;
    }
    if (parsed.kind === 'no-command') {
      // Not a request for help: a script that ran `wmp` alone fails, and the usage goes to stderr.
      out.usage(helpFor({ kind: 'top' }, table), new UsageError('no command given'));
      return ExitCode.usage;
    }
    const home = new Home(resolveHomeDir(parsed.globals.home, io.env));
    await parsed.spec.run({
      command: parsed.spec,
      args: parsed.args,
      options: parsed.options,
      home,
      out,
      signal: io.signal,
      stdin: io.stdin,
      stdout: io.stdout,
      stderr: io.stderr,
      env: io.env,
      tlsFlags: parsed.globals.tls,
    });
    return ExitCode.ok;
  } catch (error) {
    const e: CliError = io.signal.aborted && !isCliError(error) ? new InterruptedError() : toCliError(error);
    out.error(e);
    return e.exitCode;
  }
}

function isCliError(error: unknown): boolean {
  return typeof (error as { exitCode?: unknown })?.exitCode === 'number';
}
