import type { Readable, Writable } from 'node:stream';
import { NdjsonReadBuffer, serializeNdjson } from '../framing/ndjson.js';
import { StreamTransport } from './stream-transport.js';

export interface StdioTransportOptions {
  /** Default `process.stdin`. */
  readonly input?: Readable;
  /** Default `process.stdout`. Nothing else may write to it: one stray log line corrupts the stream. */
  readonly output?: Writable;
  /** Longest line accepted, in bytes. Default 1 MiB (go-wmp and wmp-js use the same). */
  readonly maxLineBytes?: number;
  /**
   * Whether `close()` ends the output and destroys the input. Default: yes for streams you pass
   * (a child's pipes), no for `process.stdin`/`process.stdout`, which outlive the transport.
   */
  readonly closeStreams?: boolean;
  /** How long `close()` waits for the output to flush. Default 2000 ms. */
  readonly closeTimeoutMs?: number;
}

/**
 * WMP over stdio (transport spec §5.3): one JSON-RPC message or batch per line, MCP-compatible.
 * An over-long or non-UTF-8 line goes to `onerror` and is dropped; the transport keeps reading.
 * End of input closes the transport.
 */
export class StdioTransport extends StreamTransport {
  constructor(options: StdioTransportOptions = {}) {
    const readable = options.input ?? process.stdin;
    const writable = options.output ?? process.stdout;
    const reader = new NdjsonReadBuffer(
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
    super({
      readable,
      writable,
      reader,
      encode: serializeNdjson,
      ownReadable: options.closeStreams ?? readable !== process.stdin,
      ownWritable: options.closeStreams ?? writable !== process.stdout,
      maxMessageBytes: reader.maxLineBytes,
      ...(options.closeTimeoutMs === undefined ? {} : { closeTimeoutMs: options.closeTimeoutMs }),
    });
  }
}
