import type { Readable, Writable } from 'node:stream';
import { DEFAULT_MAX_FRAME_BYTES } from '../framing/frame-reader.js';
import { type Endianness, encodeLengthPrefixed, LengthPrefixedReadBuffer } from '../framing/length-prefixed.js';
import { StreamTransport } from './stream-transport.js';

export interface NativeMessagingTransportOptions {
  /** Default `process.stdin` (the browser writes to the host's stdin). */
  readonly input?: Readable;
  /** Default `process.stdout`. Nothing else may write to it: a stray byte breaks the framing. */
  readonly output?: Writable;
  /** Largest message accepted from the browser, in bytes. Default 1 MiB. */
  readonly maxMessageBytes?: number;
  /** Largest message sent to the browser. Default 1 MiB: Chrome drops the host on larger ones. */
  readonly maxOutgoingBytes?: number;
  /** Byte order of the length prefix. Default `'native'`, as the browser writes it. */
  readonly endian?: Endianness;
  /** As for `StdioTransport`: default yes for streams you pass, no for the process's stdio. */
  readonly closeStreams?: boolean;
  readonly closeTimeoutMs?: number;
}

/**
 * The host side of browser native messaging (transport spec §5.2): a 4-byte native-endian length,
 * then UTF-8 JSON, over stdin/stdout. A length over the limit is fatal (`onerror`, then close); a
 * message over the outgoing limit rejects `send` and leaves the connection open.
 */
export class NativeMessagingTransport extends StreamTransport {
  readonly maxOutgoingBytes: number;

  constructor(options: NativeMessagingTransportOptions = {}) {
    const readable = options.input ?? process.stdin;
    const writable = options.output ?? process.stdout;
    const endian = options.endian ?? 'native';
    const maxOutgoingBytes = options.maxOutgoingBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const reader = new LengthPrefixedReadBuffer({
      endian,
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_FRAME_BYTES,
    });
    super({
      readable,
      writable,
      reader,
      encode: (message) => encodeLengthPrefixed(JSON.stringify(message), { endian, maxMessageBytes: maxOutgoingBytes }),
      ownReadable: options.closeStreams ?? readable !== process.stdin,
      ownWritable: options.closeStreams ?? writable !== process.stdout,
      maxMessageBytes: reader.maxMessageBytes,
      ...(options.closeTimeoutMs === undefined ? {} : { closeTimeoutMs: options.closeTimeoutMs }),
    });
    this.maxOutgoingBytes = maxOutgoingBytes;
  }
}

/** Who started this native messaging host, from the arguments the browser passes. */
export type NativeMessagingCaller =
  | { readonly browser: 'chromium'; readonly origin: string; readonly extensionId: string }
  | { readonly browser: 'firefox'; readonly manifestPath: string; readonly extensionId: string };

/**
 * Reads the caller from the host's arguments (spec §5.5: the host MUST verify who connects).
 * Chromium passes the caller's origin, `chrome-extension://<id>/`, as the first argument;
 * Firefox passes the path of the host manifest and then the add-on ID. The browser already
 * enforces the manifest's allow list; checking the ID here guards against a manifest that allows
 * more than this host expects. Returns `undefined` when the arguments match neither.
 */
export function nativeMessagingCaller(
  argv: readonly string[] = process.argv.slice(2),
): NativeMessagingCaller | undefined {
  const [first, second] = argv;
  if (first === undefined) return undefined;
  const chromium = /^chrome-extension:\/\/([a-p]{32})\/$/.exec(first);
  if (chromium) return { browser: 'chromium', origin: first, extensionId: chromium[1]! };
  if (first.endsWith('.json') && second !== undefined && second.length > 0 && !second.startsWith('-')) {
    return { browser: 'firefox', manifestPath: first, extensionId: second };
  }
  return undefined;
}
