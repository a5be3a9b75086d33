// The CLI as a library (for tests and for embedding): the runner, the command table, the help
// generator and the exit codes. The `wmp` executable is src/main.ts.
export { type CliIo, runCli } from './cli.js';
export {
  type ArgSpec,
  allCommands,
  buildTable,
  type CommandContext,
  type CommandSpec,
  type CommandTable,
  commandName,
  type GroupSpec,
  type OptionSpec,
} from './command.js';
export { COMMANDS } from './commands/index.js';
export {
  CliError,
  type CliErrorCode,
  ExitCode,
  InterruptedError,
  NotFoundError,
  TlsError,
  UnreachableError,
  UsageError,
} from './errors.js';
export { commandHelp, groupHelp, topHelp } from './help.js';
export { Home, resolveHomeDir } from './home.js';
export { Output, type OutputStreams } from './output.js';
export { type ParsedCommandLine, parseCommandLine } from './parse.js';
export type { TextSink } from './text-sink.js';
