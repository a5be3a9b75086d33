import { FrameTooLargeError, type FramingError, TruncatedFrameError } from './errors.js';
import { checkLimit, DEFAULT_MAX_FRAME_BYTES, type FrameReader } from './frame-reader.js';
import { decodeUtf8, encodeUtf8 } from './utf8.js';

/** Byte order of the 4-byte length. Browsers use the host's native order. */
export type Endianness = 'little' | 'big' | 'native';

/** The platform's byte order, found without Node's `os` module so this runs in browsers too. */
export const nativeEndianness: 'little' | 'big' =
  new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'little' : 'big';

function isLittle(endian: Endianness): boolean {
  return (endian === 'native' ? nativeEndianness : endian) === 'little';
}

export interface LengthPrefixedOptions {
  /** Byte order of the length prefix. Default `'native'` (what Chrome and Firefox use). */
  readonly endian?: Endianness;
  /** Largest message, in bytes, without the prefix. Default 1 MiB (Chrome's host-to-browser limit). */
  readonly maxMessageBytes?: number;
}

const PREFIX_BYTES = 4;

/**
 * Reads browser native messaging frames: a 4-byte unsigned length, then that many bytes of UTF-8
 * JSON. A length over the limit is fatal: the stream cannot be resynchronised, and reading on
 * would mean buffering up to 4 GiB on an attacker's word.
 */
export class LengthPrefixedReadBuffer implements FrameReader {
  readonly maxMessageBytes: number;
  private readonly little: boolean;
  private readonly header = new Uint8Array(PREFIX_BYTES);
  private headerFill = 0;
  /** The frame being filled, allocated once its (bounded) length is known. */
  private body: Uint8Array | undefined;
  private bodyFill = 0;
  private readonly queue: (string | FramingError)[] = [];
  private failure = false;

  constructor(options: LengthPrefixedOptions = {}) {
    this.little = isLittle(options.endian ?? 'native');
    this.maxMessageBytes = checkLimit('maxMessageBytes', options.maxMessageBytes ?? DEFAULT_MAX_FRAME_BYTES);
  }

  get failed(): boolean {
    return this.failure;
  }

  append(chunk: Uint8Array): void {
    let pos = 0;
    while (pos < chunk.length && !this.failure) {
      if (this.body === undefined) {
        const n = Math.min(PREFIX_BYTES - this.headerFill, chunk.length - pos);
        this.header.set(chunk.subarray(pos, pos + n), this.headerFill);
        this.headerFill += n;
        pos += n;
        if (this.headerFill === PREFIX_BYTES) this.startFrame();
        continue;
      }
      const n = Math.min(this.body.length - this.bodyFill, chunk.length - pos);
      this.body.set(chunk.subarray(pos, pos + n), this.bodyFill);
      this.bodyFill += n;
      pos += n;
      if (this.bodyFill === this.body.length) this.finishFrame(this.body);
    }
  }

  next(): string | undefined {
    const item = this.queue.shift();
    if (typeof item === 'object') throw item;
    return item;
  }

  end(): void {
    if (this.failure) return;
    if (this.headerFill > 0 || this.body !== undefined) this.fail(new TruncatedFrameError());
  }

  private startFrame(): void {
    const length = new DataView(this.header.buffer).getUint32(0, this.little);
    this.headerFill = 0;
    if (length > this.maxMessageBytes) {
      this.fail(new FrameTooLargeError(length, this.maxMessageBytes));
      return;
    }
    if (length === 0) {
      // Not JSON, but a frame all the same: the peer answers it with a parse error.
      this.queue.push('');
      return;
    }
    this.body = new Uint8Array(length);
    this.bodyFill = 0;
  }

  private finishFrame(body: Uint8Array): void {
    this.body = undefined;
    this.bodyFill = 0;
    try {
      this.queue.push(decodeUtf8(body));
    } catch (e) {
      this.queue.push(e as FramingError);
    }
  }

  private fail(error: FramingError): void {
    this.failure = true;
    this.body = undefined;
    this.headerFill = 0;
    this.queue.push(error);
  }
}

/**
 * One native messaging frame for `text`. Throws a non-fatal `FrameTooLargeError` when the UTF-8
 * text is over the limit: the browser would drop the connection on such a message.
 */
export function encodeLengthPrefixed(text: string, options: LengthPrefixedOptions = {}): Uint8Array {
  const max = checkLimit('maxMessageBytes', options.maxMessageBytes ?? DEFAULT_MAX_FRAME_BYTES);
  const body = encodeUtf8(text);
  if (body.length > max) throw new FrameTooLargeError(body.length, max, false);
  const frame = new Uint8Array(PREFIX_BYTES + body.length);
  new DataView(frame.buffer).setUint32(0, body.length, isLittle(options.endian ?? 'native'));
  frame.set(body, PREFIX_BYTES);
  return frame;
}
