// A one-line progress indicator on a terminal's stderr: a spinner, a label and a detail that the
// work updates (tries, attempt numbers). Redrawn at most every 100 ms, erased when done.
import type { TextSink } from './text-sink.js';

export interface Progress {
  /** New detail text after the label (e.g. `~40% of the expected tries`). */
  update(detail: string): void;
  /** Erases the line. Idempotent. */
  done(): void;
}

/** What `Output.progress` returns off a terminal or with --json: nothing is drawn. */
export const NO_PROGRESS: Progress = Object.freeze({ update() {}, done() {} });

const FRAMES = ['|', '/', '-', '\\'];
const REDRAW_MS = 100;

export class TerminalProgress implements Progress {
  readonly #sink: TextSink;
  readonly #label: string;
  #detail = '';
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(sink: TextSink, label: string) {
    this.#sink = sink;
    this.#label = label;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), REDRAW_MS);
    // The spinner never keeps the process alive on its own.
    this.#timer.unref?.();
  }

  update(detail: string): void {
    this.#detail = detail;
  }

  done(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sink.write('\r\x1b[K');
  }

  #draw(): void {
    const frame = FRAMES[this.#frame++ % FRAMES.length];
    const text = `${frame} ${this.#label}${this.#detail ? ` ${this.#detail}` : ''}`;
    const width = (this.#sink.columns ?? 80) - 1;
    this.#sink.write(`\r\x1b[K${text.length > width ? text.slice(0, width) : text}`);
  }
}
