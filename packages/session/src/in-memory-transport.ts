import type { JsonRpcMessage } from '@wmp/jsonrpc-envelope';
import { ConnectionClosedError } from './errors.js';
import type { Transport, TransportMessageExtra, TransportSendOptions } from './transport.js';

/**
 * Two transports joined back to back in memory, for tests and for embedding a client and a server
 * in one process. Frames are serialised and delivered asynchronously, as a real binding would.
 */
export class InMemoryTransport implements Transport {
  #other: InMemoryTransport | undefined;
  #closed = false;
  #started = false;
  readonly #queue: Array<[string, TransportMessageExtra | undefined]> = [];
  onmessage?: (frame: string | Uint8Array, extra?: TransportMessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Extra data to attach to every frame this side receives (e.g. a session header). */
  extra: TransportMessageExtra | undefined;

  static createLinkedPair(): [InMemoryTransport, InMemoryTransport] {
    const a = new InMemoryTransport();
    const b = new InMemoryTransport();
    a.#other = b;
    b.#other = a;
    return [a, b];
  }

  async start(): Promise<void> {
    this.#started = true;
    for (const [frame, extra] of this.#queue.splice(0)) this.onmessage?.(frame, extra);
  }

  async send(message: JsonRpcMessage | readonly JsonRpcMessage[], _options?: TransportSendOptions): Promise<void> {
    if (this.#closed || !this.#other || this.#other.#closed) throw new ConnectionClosedError();
    this.#other.#deliver(JSON.stringify(message));
  }

  /** Delivers a raw frame as if the other side had sent it (tests of malformed input). */
  receiveRaw(frame: string | Uint8Array): void {
    this.onmessage?.(frame, this.extra);
  }

  #deliver(frame: string): void {
    queueMicrotask(() => {
      if (this.#closed) return;
      if (!this.#started) this.#queue.push([frame, this.extra]);
      else this.onmessage?.(frame, this.extra);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
    const other = this.#other;
    if (other && !other.#closed) queueMicrotask(() => void other.close());
  }
}
