import type { ByteBudget } from '../byte-budget.js';
import { formatSseComment, formatSseEvent, type SseOutgoingEvent } from './sse-format.js';

/** Why a writer stopped: closed by us, cancelled by the reader (disconnect), or the reader fell behind. */
export type SseWriterEndReason = 'closed' | 'cancelled' | 'overflow';

export interface SseWriterOptions {
  /** Interval of keep-alive comments; default 15 s. 0 disables them. */
  readonly keepAliveMs?: number;
  /**
   * Most bytes queued for a reader that does not keep up; past it the stream is ended (what was
   * queued is still delivered) and the reader reconnects with `Last-Event-ID`. Default 4 MiB.
   */
  readonly maxQueuedBytes?: number;
  /** Called once when the stream ends, whatever ended it. */
  readonly onEnd?: (reason: SseWriterEndReason) => void;
  /**
   * Bytes queued to slow readers across the server: what this stream has queued is reserved in
   * it, and a write that does not fit ends the stream as an `overflow`.
   */
  readonly budget?: ByteBudget;
}

const encoder = new TextEncoder();

/**
 * The server side of one SSE response: a byte `ReadableStream` (use it as the `Response` body)
 * with bounded queueing and keep-alive comments. Runtime-agnostic: web streams and timers only.
 */
export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #ended = false;
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  readonly #onEnd: ((reason: SseWriterEndReason) => void) | undefined;
  readonly #budget: ByteBudget | undefined;
  readonly #maxQueuedBytes: number;
  /** Bytes of this stream reserved in the budget: what the reader has not taken yet. */
  #reserved = 0;

  constructor(options: SseWriterOptions = {}) {
    this.#onEnd = options.onEnd;
    this.#budget = options.budget;
    const maxQueuedBytes = options.maxQueuedBytes ?? 4 * 1024 * 1024;
    this.#maxQueuedBytes = maxQueuedBytes;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        // The reader took chunks: what it took is no longer held for it.
        pull: () => {
          this.#account(0);
        },
        cancel: () => this.#end('cancelled', false),
      },
      // The queue is measured in bytes, so desiredSize tells how far the reader is behind.
      { highWaterMark: maxQueuedBytes, size: (chunk) => chunk.byteLength },
    );
    const keepAliveMs = options.keepAliveMs ?? 15_000;
    if (keepAliveMs > 0) {
      this.#timer = setInterval(() => this.comment('keep-alive'), keepAliveMs);
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Queues one event. False when the stream has ended (then nothing was queued). */
  write(event: SseOutgoingEvent): boolean {
    return this.#enqueue(formatSseEvent(event));
  }

  /** Queues a comment line. */
  comment(text: string): boolean {
    return this.#enqueue(formatSseComment(text));
  }

  /** Queues raw, already formatted stream text (e.g. a `retry:` line). */
  raw(text: string): boolean {
    return this.#enqueue(text);
  }

  /** Ends the stream after what is queued. */
  close(): void {
    this.#end('closed', true);
  }

  #enqueue(text: string): boolean {
    if (this.#ended) return false;
    const chunk = encoder.encode(text);
    if (!this.#account(chunk.byteLength)) {
      this.#end('overflow', true);
      return true;
    }
    this.#controller.enqueue(chunk);
    if ((this.#controller.desiredSize ?? 0) < 0) {
      this.#end('overflow', true);
    }
    return true;
  }

  /**
   * Brings the budget in step with what is queued (the stream's queue size, plus `adding` bytes
   * about to be queued); false when those do not fit.
   */
  #account(adding: number): boolean {
    if (this.#budget === undefined) return true;
    const queued = this.#ended ? 0 : this.#maxQueuedBytes - (this.#controller.desiredSize ?? this.#maxQueuedBytes);
    const want = Math.max(0, queued) + adding;
    if (want > this.#reserved) {
      if (!this.#budget.tryReserve(want - this.#reserved)) return false;
    } else this.#budget.release(this.#reserved - want);
    this.#reserved = want;
    return true;
  }

  #end(reason: SseWriterEndReason, closeStream: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#timer);
    // What is still queued leaves with the stream (or is dropped with it): no longer held here.
    this.#budget?.release(this.#reserved);
    this.#reserved = 0;
    if (closeStream) {
      try {
        this.#controller.close();
      } catch {
        // already closed or errored by the reader side
      }
    }
    this.#onEnd?.(reason);
  }
}
