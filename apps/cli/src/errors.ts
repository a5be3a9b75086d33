// The CLI's errors: a small typed family, each kind with its exit code and a stable `code` for
// `--json`. Every error says what went wrong (`message`) and what to do about it (`hint`).

/** Process exit codes, documented in the README and in `wmp --help`. */
export const ExitCode = Object.freeze({
  /** The command did what was asked. */
  ok: 0,
  /** The command ran and failed: refused by a relay or box, a bad signature, a local file problem. */
  failure: 1,
  /** The command line is wrong: unknown command or option, missing or malformed argument. */
  usage: 2,
  /** Something named does not exist: no identity in the home, no card for a key, unknown group or flow. */
  notFound: 3,
  /** A relay or box could not be reached (refused, timed out, connection lost). */
  unreachable: 4,
  /** TLS failed: the relay's certificate is not trusted here (or ours was refused); retrying will not help. */
  tls: 5,
  /** Interrupted by Ctrl-C (SIGINT) before the command finished (128 + 2, as shells report it). */
  interrupted: 130,
});

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Kinds of errors; `code` in `--json` error objects. */
export type CliErrorCode = 'failed' | 'usage' | 'not_found' | 'unreachable' | 'tls' | 'interrupted';

/** Base class: a message (what went wrong) and a hint (what to do), both safe to print. */
export class CliError extends Error {
  readonly code: CliErrorCode = 'failed';
  readonly exitCode: ExitCodeValue = ExitCode.failure;
  readonly hint: string | undefined;
  /** Machine-readable details for `--json` (never secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(message: string, hint?: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'CliError';
    this.hint = hint;
    this.details = details;
  }
}

export class UsageError extends CliError {
  override readonly code = 'usage';
  override readonly exitCode = ExitCode.usage;
  /** The command whose help the hint points to (`wmp <command> --help`). */
  readonly command: string | undefined;
  constructor(message: string, command?: string, hint?: string) {
    super(message, hint ?? `Run: wmp ${command ? `${command} ` : ''}--help`);
    this.name = 'UsageError';
    this.command = command;
  }
}

export class NotFoundError extends CliError {
  override readonly code = 'not_found';
  override readonly exitCode = ExitCode.notFound;
  constructor(message: string, hint?: string, details?: Record<string, unknown>) {
    super(message, hint, details);
    this.name = 'NotFoundError';
  }
}

export class UnreachableError extends CliError {
  override readonly code = 'unreachable';
  override readonly exitCode = ExitCode.unreachable;
  constructor(message: string, hint?: string, details?: Record<string, unknown>) {
    super(message, hint, details);
    this.name = 'UnreachableError';
  }
}

export class TlsError extends CliError {
  override readonly code = 'tls';
  override readonly exitCode = ExitCode.tls;
  constructor(message: string, hint?: string, details?: Record<string, unknown>) {
    super(message, hint, details);
    this.name = 'TlsError';
  }
}

export class InterruptedError extends CliError {
  override readonly code = 'interrupted';
  override readonly exitCode = ExitCode.interrupted;
  constructor() {
    super('interrupted');
    this.name = 'InterruptedError';
  }
}
