import { TransportError } from '../errors.js';

/**
 * Framing errors. A stream transport reports each one through `onerror`; `fatal` says whether the
 * byte stream can still be read. A line that is too long or not UTF-8 costs only that frame,
 * because the next newline resynchronises NDJSON. A length prefix over the limit cannot be
 * skipped safely (the prefix itself may be garbage), so it ends the stream.
 */
export class FramingError extends TransportError {
  /** True when the stream cannot be read any further. */
  readonly fatal: boolean;
  constructor(code: string, message: string, fatal: boolean) {
    super(code, message);
    this.name = 'FramingError';
    this.fatal = fatal;
  }
}

/** An NDJSON line longer than the limit. The line is dropped; the next line is read as usual. */
export class LineTooLongError extends FramingError {
  readonly limit: number;
  constructor(limit: number) {
    super('ERR_LINE_TOO_LONG', 'line too long', false);
    this.name = 'LineTooLongError';
    this.limit = limit;
  }
}

/** A frame whose declared or actual length is over the limit. Fatal when read from a stream. */
export class FrameTooLargeError extends FramingError {
  readonly length: number;
  readonly limit: number;
  constructor(length: number, limit: number, fatal = true) {
    super('ERR_FRAME_TOO_LARGE', 'frame too large', fatal);
    this.name = 'FrameTooLargeError';
    this.length = length;
    this.limit = limit;
  }
}

/** A frame that is not well-formed UTF-8. The frame is dropped; framing is intact. */
export class InvalidUtf8Error extends FramingError {
  constructor() {
    super('ERR_INVALID_UTF8', 'frame is not valid UTF-8', false);
    this.name = 'InvalidUtf8Error';
  }
}

/** The stream ended inside a length-prefixed frame. */
export class TruncatedFrameError extends FramingError {
  constructor() {
    super('ERR_TRUNCATED_FRAME', 'stream ended inside a frame', true);
    this.name = 'TruncatedFrameError';
  }
}
