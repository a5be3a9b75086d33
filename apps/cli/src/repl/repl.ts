// The interactive loop of `wmp connect`: node:readline with a prompt, history saved in the home,
// lines run one at a time, and text that arrives meanwhile (incoming messages) printed above the
// prompt without disturbing what is being typed. Off a terminal (a pipe, a test) there is no
// prompt and no line editing: lines are read and run in order until the input ends.
import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';
import { HISTORY_LINES, loadHistory, saveHistory } from './history.js';

export interface ReplOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream & { readonly isTTY?: boolean | undefined };
  /** Line editing, prompt and history keys (true when both ends are terminals). */
  readonly terminal: boolean;
  readonly historyFile: string;
  readonly prompt: string;
  /** Ends the loop (Ctrl-C outside a terminal, or the connection is gone). */
  readonly signal: AbortSignal;
  /** Runs one line. Resolving `'quit'` ends the loop; the caller reports its own errors. */
  readonly onLine: (line: string) => Promise<'quit' | undefined>;
}

export class Repl {
  readonly #options: ReplOptions;
  #rl: Interface | undefined;
  /** True while the prompt is on screen (waiting for a line, not running one). */
  #prompting = false;

  constructor(options: ReplOptions) {
    this.#options = options;
  }

  /** Writes text (whole lines) so that it appears above the prompt and the line being typed. */
  print(text: string): void {
    const { output, terminal } = this.#options;
    const body = text.endsWith('\n') ? text : `${text}\n`;
    if (!terminal || !this.#rl || !this.#prompting) {
      output.write(body);
      return;
    }
    clearLine(output, 0);
    cursorTo(output, 0);
    output.write(body);
    this.#rl.prompt(true);
  }

  /** Runs until the input ends, a line quits, Ctrl-C on an empty line, or the signal aborts. */
  async run(): Promise<void> {
    const { input, output, terminal, historyFile, prompt, signal, onLine } = this.#options;
    const history = await loadHistory(historyFile).catch(() => []);
    const rl = createInterface({
      input,
      output,
      terminal,
      prompt,
      history: [...history],
      historySize: HISTORY_LINES,
      removeHistoryDuplicates: true,
    });
    this.#rl = rl;
    // History is kept here too (readline keeps none off a terminal), newest first, and saved on
    // the way out. A line starting with a space is left out, as in shells (a way to keep a
    // message out of the file).
    let latest = history;
    const remember = (line: string) => {
      if (line.startsWith(' ') || line.trim() === '') return;
      latest = [line, ...latest.filter((l) => l !== line)].slice(0, HISTORY_LINES);
    };
    rl.on('SIGINT', () => {
      // Ctrl-C on a terminal: clear a half-typed line, or quit on an empty one.
      if (rl.line.length > 0) {
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
      } else rl.close();
    });
    const onAbort = () => rl.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal.aborted) return;
      const lines = rl[Symbol.asyncIterator]();
      if (terminal) this.#showPrompt();
      for (;;) {
        const next = await lines.next();
        if (next.done) break;
        const raw = next.value as string;
        remember(raw);
        this.#prompting = false;
        const line = raw.trim();
        if (line !== '' && (await onLine(line)) === 'quit') break;
        if (signal.aborted) break;
        if (terminal) this.#showPrompt();
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#prompting = false;
      rl.close();
      if (terminal) output.write('\n');
      await saveHistory(historyFile, latest).catch(() => undefined);
    }
  }

  #showPrompt(): void {
    this.#prompting = true;
    this.#rl?.prompt();
  }
}
