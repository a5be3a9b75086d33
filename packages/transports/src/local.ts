// Browser-safe local bindings: pure framing and reconnection backoff (no I/O).
export {
  FrameTooLargeError,
  FramingError,
  InvalidUtf8Error,
  LineTooLongError,
  TruncatedFrameError,
} from './framing/errors.js';
export { DEFAULT_MAX_FRAME_BYTES, type FrameReader } from './framing/frame-reader.js';
export {
  type Endianness,
  encodeLengthPrefixed,
  type LengthPrefixedOptions,
  LengthPrefixedReadBuffer,
  nativeEndianness,
} from './framing/length-prefixed.js';
export { NdjsonReadBuffer, type NdjsonReadBufferOptions, serializeNdjson } from './framing/ndjson.js';
export {
  type ReconnectAttempt,
  ReconnectFailedError,
  type ReconnectOptions,
  ReconnectPolicy,
  type ReconnectPolicyOptions,
  reconnect,
} from './reconnect.js';
