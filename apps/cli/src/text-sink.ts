// Where text goes. Its own module because both the output and the progress line write to one
// (they imported each other before).

/** A stream's `write` and whether it is a terminal. */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  /** Terminal width, when known (the progress line is cut to it). */
  readonly columns?: number | undefined;
}
