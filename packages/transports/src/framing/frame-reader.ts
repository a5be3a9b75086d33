/**
 * What a stream transport needs from a framing: bytes in, frames out. Both framings queue frames
 * and errors in stream order, so the frames a reader yields never depend on how the bytes were
 * split into chunks.
 */
export interface FrameReader {
  /** Adds bytes received from the stream. Never throws. */
  append(chunk: Uint8Array): void;
  /**
   * The next complete frame as text, or `undefined` when none is buffered. Throws a
   * `FramingError` for a bad frame, once per bad frame; call again to read on (after a fatal
   * error there is nothing more to read).
   */
  next(): string | undefined;
  /** Marks the end of the stream; what is left over becomes a last frame or an error. */
  end(): void;
  /** True after a fatal framing error: further input is ignored. */
  readonly failed: boolean;
}

/** 1 MiB: the stdio limit of go-wmp and wmp-js, and Chrome's host-to-browser message limit. */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;

export function checkLimit(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
