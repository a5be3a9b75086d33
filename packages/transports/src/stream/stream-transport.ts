import type { Readable, Writable } from 'node:stream';
import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import type { Transport, TransportMessageExtra } from '@wmp/session';
import { TransportError } from '../errors.js';
import type { FrameReader } from '../framing/frame-reader.js';

/** Misuse of a stream transport's lifecycle. `code` is stable; the message is fixed. */
export type StreamTransportErrorCode = 'ERR_CLOSED' | 'ERR_NOT_STARTED' | 'ERR_ALREADY_STARTED';

const STREAM_MESSAGES: Readonly<Record<StreamTransportErrorCode, string>> = {
  ERR_CLOSED: 'transport closed',
  ERR_NOT_STARTED: 'transport not started',
  ERR_ALREADY_STARTED: 'transport already started',
};

export class StreamTransportError extends TransportError {
  declare readonly code: StreamTransportErrorCode;
  constructor(code: StreamTransportErrorCode) {
    super(code, STREAM_MESSAGES[code]);
    this.name = 'StreamTransportError';
  }
}

export interface StreamTransportConfig {
  readonly readable: Readable;
  readonly writable: Writable;
  readonly reader: FrameReader;
  /** One frame for a message; may throw (a frame over the outgoing limit), which rejects `send`. */
  readonly encode: (message: JsonRpcMessage | readonly JsonRpcMessage[]) => string | Uint8Array;
  /** Whether `close()` ends/destroys each stream. Never for the process's own stdio by default. */
  readonly ownReadable: boolean;
  readonly ownWritable: boolean;
  readonly maxMessageBytes: number;
  /** How long `close()` waits for an owned stream to flush and close before destroying it. */
  readonly closeTimeoutMs?: number;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 2000;
const ignore = () => {};
const utf8 = new TextEncoder();

/**
 * A Transport over a Node byte stream pair with a pluggable framing (NDJSON or length-prefixed).
 * Errors never escape as exceptions from stream callbacks: bad frames, stream errors and a
 * throwing `onmessage` all go to `onerror`, and every way of ending (close(), EOF, stream error,
 * fatal framing error) runs one shutdown path, so `onclose` fires exactly once.
 */
export abstract class StreamTransport implements Transport {
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly maxMessageBytes: number;

  private state: 'new' | 'open' | 'closed' = 'new';
  private closing: Promise<void> | undefined;
  private drainWait: Promise<void> | undefined;
  private rejectDrain: ((error: Error) => void) | undefined;
  private readonly config: StreamTransportConfig;
  /** One Duplex (a socket) on both sides. */
  private readonly duplex: boolean;

  protected constructor(config: StreamTransportConfig) {
    this.config = config;
    this.duplex = (config.readable as unknown) === config.writable;
    this.maxMessageBytes = config.maxMessageBytes;
  }

  /** True once the transport has closed, for whatever reason. */
  get closed(): boolean {
    return this.state === 'closed';
  }

  async start(): Promise<void> {
    if (this.state === 'open') throw new StreamTransportError('ERR_ALREADY_STARTED');
    if (this.state === 'closed') throw new StreamTransportError('ERR_CLOSED');
    this.state = 'open';
    const { readable, writable } = this.config;
    readable.on('error', this.onStreamError);
    readable.on('end', this.onEnd);
    readable.on('close', this.onStreamClose);
    if (!this.duplex) {
      writable.on('error', this.onStreamError);
      writable.on('close', this.onStreamClose);
    }
    // Last: attaching 'data' switches the stream to flowing mode.
    readable.on('data', this.onData);
    if (readable.readableEnded || readable.destroyed) void this.close();
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[]): Promise<void> {
    if (this.state === 'new') throw new StreamTransportError('ERR_NOT_STARTED');
    const { writable } = this.config;
    if (this.state === 'closed' || writable.destroyed || writable.writableEnded) {
      throw new StreamTransportError('ERR_CLOSED');
    }
    const frame = this.config.encode(message);
    if (writable.write(frame)) return;
    // Backpressure: one shared wait, so many pending sends add one 'drain' listener, not many.
    this.drainWait ??= new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        this.drainWait = undefined;
        this.rejectDrain = undefined;
        resolve();
      };
      this.rejectDrain = (error) => {
        writable.off('drain', onDrain);
        reject(error);
      };
      writable.once('drain', onDrain);
    });
    await this.drainWait;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private readonly onData = (chunk: Uint8Array | string): void => {
    this.config.reader.append(typeof chunk === 'string' ? utf8.encode(chunk) : chunk);
    this.deliver();
  };

  private readonly onEnd = (): void => {
    this.config.reader.end();
    this.deliver();
    void this.close();
  };

  private readonly onStreamClose = (): void => {
    void this.close();
  };

  private readonly onStreamError = (error: Error): void => {
    this.report(error);
    void this.close();
  };

  /** Hands every buffered frame to `onmessage`, until none is left or the transport closes. */
  private deliver(): void {
    const { reader } = this.config;
    while (this.state === 'open') {
      let frame: string | undefined;
      try {
        frame = reader.next();
      } catch (e) {
        this.report(e);
        if (reader.failed) void this.close();
        continue;
      }
      if (frame === undefined) return;
      try {
        this.onmessage?.(frame);
      } catch (e) {
        this.report(e);
      }
    }
  }

  private report(error: unknown): void {
    if (!this.onerror) return;
    try {
      this.onerror(error instanceof Error ? error : new Error('non-error thrown', { cause: error }));
    } catch {
      // An error handler that throws has nowhere to report to; the stream must keep running.
    }
  }

  private async shutdown(): Promise<void> {
    this.state = 'closed';
    const { readable, writable, ownReadable, ownWritable } = this.config;
    readable.off('data', this.onData);
    readable.off('end', this.onEnd);
    for (const stream of [readable, writable]) {
      stream.off('error', this.onStreamError);
      stream.off('close', this.onStreamClose);
    }
    this.rejectDrain?.(new StreamTransportError('ERR_CLOSED'));
    this.rejectDrain = undefined;
    this.drainWait = undefined;
    await this.releaseStreams(readable, writable, ownReadable, ownWritable);
    try {
      this.onclose?.();
    } catch (e) {
      this.report(e);
    }
  }

  private async releaseStreams(readable: Readable, writable: Writable, ownR: boolean, ownW: boolean): Promise<void> {
    const timeout = this.config.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    // Owned streams keep a no-op error listener: a late EPIPE or ECONNRESET after close must not
    // become an uncaught exception.
    if (ownR) readable.on('error', ignore);
    if (ownW && !this.duplex) writable.on('error', ignore);
    if (this.duplex) {
      if (!ownR) return;
      // A socket: half-close so queued writes flush, keep reading so the peer's FIN arrives.
      writable.end();
      readable.resume();
      await settled(writable, ['close'], timeout);
      return;
    }
    if (ownR) readable.destroy();
    // Not ours (process.stdin): stop reading so an idle process can exit.
    else if (readable.listenerCount('data') === 0) readable.pause();
    if (ownW) {
      writable.end();
      await settled(writable, ['finish', 'close'], timeout);
    }
  }
}

/**
 * Resolves on the first of `events` (or an error), destroying the stream if none comes within
 * `ms`: a peer that stops reading must not hold `close()` open.
 */
function settled(stream: Writable, events: readonly ('finish' | 'close')[], ms: number): Promise<void> {
  if (stream.destroyed || (events.includes('finish') && stream.writableFinished)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const event of [...events, 'error']) stream.off(event, done);
      resolve();
    };
    const timer = setTimeout(() => {
      stream.destroy();
      done();
    }, ms);
    timer.unref?.();
    for (const event of [...events, 'error']) stream.once(event, done);
  });
}
