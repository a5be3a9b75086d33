// Everything a command prints goes through here, so human and `--json` output cannot mix:
// - results and streamed items: text lines for people, or one JSON value per line (stdout);
// - notes: human-only remarks on stderr (nothing in --json);
// - warnings and errors: stderr, as text or as one JSON object per line in --json;
// - progress: a one-line indicator on stderr, only when stderr is a terminal and not in --json.
import { type CliError, ExitCode } from './errors.js';
import { NO_PROGRESS, type Progress, TerminalProgress } from './progress.js';
import type { TextSink } from './text-sink.js';

export interface OutputStreams {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
}

/** Human text: one string (may hold newlines) or a list of lines. */
export type HumanText = string | readonly string[];

function lines(text: HumanText): string {
  const s = typeof text === 'string' ? text : text.join('\n');
  return s.endsWith('\n') || s === '' ? s : `${s}\n`;
}

export class Output {
  readonly json: boolean;
  readonly #io: OutputStreams;

  constructor(io: OutputStreams, options: { json: boolean }) {
    this.#io = io;
    this.json = options.json;
  }

  /** The result of a command: `human()` for people, `value` (one JSON line) with --json. */
  result(value: unknown, human: () => HumanText): void {
    if (this.json) this.#io.stdout.write(`${JSON.stringify(value)}\n`);
    else this.#io.stdout.write(lines(human()));
  }

  /** One item of a stream (a received message, an event): same shapes as `result`, one per call. */
  item(value: unknown, human: () => HumanText): void {
    this.result(value, human);
  }

  /** A remark for people on stderr (what is happening, what was skipped). Nothing with --json. */
  note(text: string): void {
    if (!this.json) this.#io.stderr.write(lines(text));
  }

  /** Something the user should know about although the command goes on (both modes, stderr). */
  warn(text: string, code = 'warning'): void {
    if (this.json) this.#io.stderr.write(`${JSON.stringify({ warning: { code, message: text } })}\n`);
    else this.#io.stderr.write(`wmp: warning: ${text}\n`);
  }

  /** Writes a failed command's error: what went wrong, then what to do. */
  error(error: CliError): void {
    if (this.json) {
      const body: Record<string, unknown> = { code: error.code, exit: error.exitCode, message: error.message };
      if (error.hint) body.hint = error.hint;
      if (error.details) body.details = error.details;
      this.#io.stderr.write(`${JSON.stringify({ error: body })}\n`);
      return;
    }
    if (error.exitCode === ExitCode.interrupted) {
      this.#io.stderr.write('wmp: interrupted\n');
      return;
    }
    this.#io.stderr.write(`wmp: ${error.message}\n${error.hint ? `${error.hint}\n` : ''}`);
  }

  /** A command line without a command: the usage text on stderr (people), or the error (--json). */
  usage(text: string, error: CliError): void {
    if (this.json) this.error(error);
    else this.#io.stderr.write(text);
  }

  /** A progress line for slow work (stamp mining, connection retries); a no-op unless on a TTY. */
  progress(label: string): Progress {
    if (this.json || this.#io.stderr.isTTY !== true) return NO_PROGRESS;
    return new TerminalProgress(this.#io.stderr, label);
  }

  /** Raw text to stdout (help, exported files): the same in both modes. */
  raw(text: string): void {
    this.#io.stdout.write(text);
  }
}
