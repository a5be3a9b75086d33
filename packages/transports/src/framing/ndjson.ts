import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { type FramingError, LineTooLongError } from './errors.js';
import { checkLimit, DEFAULT_MAX_FRAME_BYTES, type FrameReader } from './frame-reader.js';
import { decodeUtf8 } from './utf8.js';

const LF = 0x0a;
const CR = 0x0d;

export interface NdjsonReadBufferOptions {
  /** Longest line accepted, in bytes, without its line ending. Default 1 MiB. */
  readonly maxLineBytes?: number;
}

/**
 * Splits a byte stream into NDJSON lines (stdio, Unix sockets; MCP-compatible). Lines end with LF
 * or CRLF. Blank lines are skipped. Splitting happens on bytes before decoding, so a UTF-8
 * character cut across chunks decodes whole (0x0A never occurs inside a multi-byte sequence).
 *
 * A line over the limit is reported once and its bytes are dropped up to the next newline, so
 * one bad line costs one frame and never more than `maxLineBytes` of memory.
 */
export class NdjsonReadBuffer implements FrameReader {
  readonly maxLineBytes: number;
  /** Bytes of the current unfinished line, copied because a stream may reuse its chunks. */
  private partial: Uint8Array[] = [];
  private partialBytes = 0;
  /** Inside an over-long line whose error was already queued: drop bytes until LF. */
  private discarding = false;
  private readonly queue: (string | FramingError)[] = [];

  constructor(options: NdjsonReadBufferOptions = {}) {
    this.maxLineBytes = checkLimit('maxLineBytes', options.maxLineBytes ?? DEFAULT_MAX_FRAME_BYTES);
  }

  /** NDJSON always resynchronises at the next newline, so it never fails for good. */
  get failed(): boolean {
    return false;
  }

  /** Bytes held for the unfinished line. */
  get bufferedBytes(): number {
    return this.partialBytes;
  }

  append(chunk: Uint8Array): void {
    let pos = 0;
    while (pos < chunk.length) {
      const lf = chunk.indexOf(LF, pos);
      if (this.discarding) {
        if (lf < 0) return;
        this.discarding = false;
        pos = lf + 1;
        continue;
      }
      if (lf < 0) {
        this.hold(chunk.subarray(pos));
        return;
      }
      this.line(this.takePartial(chunk.subarray(pos, lf)));
      pos = lf + 1;
    }
  }

  next(): string | undefined {
    const item = this.queue.shift();
    if (typeof item === 'object') throw item;
    return item;
  }

  /** An unterminated last line still counts (as Go's bufio.Scanner reads it). */
  end(): void {
    if (this.discarding) this.discarding = false;
    else if (this.partialBytes > 0) this.line(this.takePartial(new Uint8Array(0)));
  }

  private hold(rest: Uint8Array): void {
    const total = this.partialBytes + rest.length;
    // One byte of slack for a CR whose LF has not arrived yet, so the verdict on a line never
    // depends on where a chunk boundary fell.
    const last = rest.length > 0 ? rest[rest.length - 1] : undefined;
    if (total > this.maxLineBytes + 1 || (total === this.maxLineBytes + 1 && last !== CR)) {
      this.partial = [];
      this.partialBytes = 0;
      this.discarding = true;
      this.queue.push(new LineTooLongError(this.maxLineBytes));
      return;
    }
    this.partial.push(rest.slice());
    this.partialBytes = total;
  }

  private takePartial(tail: Uint8Array): Uint8Array {
    if (this.partialBytes === 0) return tail;
    const line = new Uint8Array(this.partialBytes + tail.length);
    let at = 0;
    for (const piece of this.partial) {
      line.set(piece, at);
      at += piece.length;
    }
    line.set(tail, at);
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  private line(bytes: Uint8Array): void {
    const body = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, -1) : bytes;
    if (body.length > this.maxLineBytes) {
      this.queue.push(new LineTooLongError(this.maxLineBytes));
      return;
    }
    if (isBlank(body)) return;
    try {
      this.queue.push(decodeUtf8(body));
    } catch (e) {
      this.queue.push(e as FramingError);
    }
  }
}

/** Only spaces, tabs and CRs: go-wmp skips such lines, and they can never be a JSON value. */
function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  return true;
}

/**
 * One NDJSON line for a message or batch. `JSON.stringify` escapes every control character inside
 * strings and adds no whitespace, so the text can never contain a raw newline.
 */
export function serializeNdjson(message: JsonRpcMessage | readonly JsonRpcMessage[]): string {
  return JSON.stringify(message) + '\n';
}
